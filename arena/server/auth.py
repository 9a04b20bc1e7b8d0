"""Credentials: bearer tokens in the metadata, and the operator's credential for AdminService."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

ADMIN_PREFIX = "/grosstarock.arena.v1.AdminService/"


def bearer_token(metadata: Any) -> str:
    """The token of an `authorization: Bearer <token>` metadata entry, or ''."""
    return read_bearer(metadata, "token")[0]


def read_bearer(metadata: Any, what: str) -> tuple[str, str]:
    """(token, '') for an `authorization: Bearer <token>` entry; else ('', why there is none).

    `what` names the credential in the reason ("seat token", "bot token", "operator token"):
    the metadata is missing, or it is not of the Bearer scheme, or the token after it is empty.
    Whether the token is known is the caller's to say (`unknown_token`). The scheme's name is
    case-insensitive, as HTTP's are."""
    values = [value for key, value in metadata or () if key == "authorization"]
    if not values:
        return "", f"missing {what}: no `authorization: Bearer` metadata"
    value = values[0]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    scheme, _, token = str(value).strip().partition(" ")
    if scheme.lower() != "bearer":
        shown = scheme if len(scheme) <= 20 else scheme[:20] + "…"
        return "", f"wrong authorization scheme {shown!r}: expected `Bearer` and the {what}"
    token = token.strip()
    if not token:
        return "", f"missing {what}: nothing follows `Bearer` in the authorization metadata"
    return token, ""


def unknown_token(what: str, why: str) -> str:
    """The refusal of a well-formed token that the server does not know, and why it may not."""
    return f"unknown {what}: {why}"


def load_operator_token(path: Path) -> str:
    """The operator token kept in `path`; a new random one, written owner-only, if there is none."""
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if not token:
            raise ValueError(f"{path}: the operator token file is empty")
        return token
    token = "gto_" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(token + "\n")
    return token


class OperatorCredential(grpc.aio.ServerInterceptor):
    """Every AdminService call must carry the operator token; the rest pass untouched.

    Only the token's hash is held, and compared in constant time. With no token at all,
    the admin service refuses every call.
    """

    def __init__(self, token: str | None) -> None:
        self._hash = hashlib.sha256(token.encode()).digest() if token else None

    def refusal(self, metadata: Any) -> str:
        """Why a call with this metadata may not use the admin service ('' when it may)."""
        if self._hash is None:
            return "this server has no operator credential"
        offered, problem = read_bearer(metadata, "operator token")
        if problem:
            return problem
        if hmac.compare_digest(hashlib.sha256(offered.encode()).digest(), self._hash):
            return ""
        return "wrong operator token: not this server's (`arena serve` keeps it in --operator-token-file)"

    def allows(self, metadata: Any) -> bool:
        return not self.refusal(metadata)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(ADMIN_PREFIX):
            return handler
        details = self.refusal(handler_call_details.invocation_metadata)
        if not details:
            return handler

        async def deny(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, details)

        codecs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        if handler.unary_stream is not None:
            # grpc.aio takes a coroutine for a server-streaming method too (it would write with
            # context.write); this one ends the call before any write.
            return grpc.unary_stream_rpc_method_handler(deny, **codecs)
        return grpc.unary_unary_rpc_method_handler(deny, **codecs)
