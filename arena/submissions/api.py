"""`SubmissionService` (proto/arena/v1/arena.proto): a bot's owner submits and lists versions over
gRPC, authenticated by the bot's token, on a server that hosts submitted bots."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from ..server.auth import read_bearer, unknown_token
from ..standing.store import Store
from ..standing.versions import VersionRecord
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .archive import ArchiveError
from .manifest import ManifestError
from .submit import SubmitError, submit, versions


def version_message(version: VersionRecord, report: bool = False) -> pb.BotVersion:
    return pb.BotVersion(
        bot=version.bot,
        version=version.version,
        digest=version.digest,
        language=str(version.manifest.get("language", "")),
        state=version.state,
        reason=version.reason,
        submitted_ms=version.submitted_ms,
        report=version.report if report else "",
    )


class SubmissionServicer(pb_grpc.SubmissionServiceServicer):
    def __init__(self, store: Store) -> None:
        self.store = store

    async def _token(self, context: grpc.aio.ServicerContext[Any, Any]) -> str:
        token, problem = read_bearer(context.invocation_metadata(), "bot token")
        if not token:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, problem or unknown_token("bot token", ""))
        return token

    async def _call(self, context: grpc.aio.ServicerContext[Any, Any], fn: Any, *args: Any) -> Any:
        try:
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
        except SubmitError as exc:
            code = (
                grpc.StatusCode.UNAUTHENTICATED if "token" in str(exc) else grpc.StatusCode.INVALID_ARGUMENT
            )
            await context.abort(code, str(exc))
        except (ArchiveError, ManifestError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    async def SubmitVersion(
        self, request: pb.SubmitVersionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SubmitVersionResponse:
        token = await self._token(context)
        version, created = await self._call(context, submit, self.store, token, bytes(request.archive))
        return pb.SubmitVersionResponse(version=version_message(version), created=created)

    async def ListVersions(
        self, request: pb.ListVersionsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListVersionsResponse:
        token = await self._token(context)
        _name, rows = await self._call(context, versions, self.store, token)
        return pb.ListVersionsResponse(versions=[version_message(v, request.reports) for v in rows])


def add_submission_service(store: Store, server: grpc.aio.Server) -> str:
    """Register the service on `server`; its full name (for reflection and health)."""
    pb_grpc.add_SubmissionServiceServicer_to_server(SubmissionServicer(store), server)  # type: ignore[no-untyped-call]
    return str(pb.DESCRIPTOR.services_by_name["SubmissionService"].full_name)
