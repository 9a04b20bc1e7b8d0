"""The arena on the web: a read-only site and its JSON API, served beside the referee.

`arena serve --http HOST:PORT` runs it in the server's own trio loop (Hypercorn's trio worker
and Starlette). `feed` keeps each running match's public events for live tables; `data` reads
the standing arena's store; `app` answers the HTTP requests; `static/` holds every page and
asset (no build step, nothing fetched from elsewhere).
"""
