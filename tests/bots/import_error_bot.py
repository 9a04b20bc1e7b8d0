"""A bot that never gets as far as dialling the server: it fails while its modules load.

`arena play`'s tests use it for the most common first mistake of a bot author: an exception
at import time (a typo, a missing package). The traceback goes to the bot's log.
"""

from __future__ import annotations

raise ImportError("this bot fails at import (on purpose): no module named 'mybot_helpers'")
