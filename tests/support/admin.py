"""The operator's side of a server: its token and an admin channel."""

from __future__ import annotations

from typing import Any, NamedTuple

import grpc


class _Details(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: Any
    compression: Any


class WithToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """Adds `authorization: Bearer <token>` to every call of a channel."""

    def __init__(self, token: str) -> None:
        self.token = token

    def _details(self, details: Any) -> _Details:
        metadata = [*(details.metadata or ()), ("authorization", f"Bearer {self.token}")]
        return _Details(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready, None
        )

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)


OPERATOR_TOKEN = "operator-secret"


def admin_channel(address: str, token: str = OPERATOR_TOKEN) -> grpc.Channel:
    return grpc.intercept_channel(grpc.insecure_channel(address), WithToken(token))
