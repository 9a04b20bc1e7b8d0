"""Malformed requests: every method's request bytes are parsed in one place.

grpc.aio parses a request with the method's deserializer before any servicer runs; a
`DecodeError` there ends the call `UNKNOWN: Unexpected <class DecodeError>`, and on a stream
it surfaced as the end of the stream. `MalformedRequests`, a server interceptor, gives every
method a deserializer that never raises: bytes that do not parse become a `Malformed` value
naming the message type. A unary request that is `Malformed` ends the call
`INVALID_ARGUMENT` before the servicer runs; on a request stream read through an iterator
the same happens at the bad message, and a servicer that reads with `context.read()` (the bot
stream) sees the `Malformed` value itself, to record it as the seat's protocol fault.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

Deserializer = Callable[[bytes], Any]


@dataclass(frozen=True)
class Malformed:
    """Request bytes that are not a message of the method's request type."""

    type_name: str  # the message type's full name, e.g. grosstarock.arena.v1.CreateMatchRequest
    error: str

    @property
    def details(self) -> str:
        """The status details: the message type and the parser's complaint."""
        # upb says "Error parsing message with type 'T': why"; the type is named already.
        why = self.error.partition("': ")[2] if self.error.startswith("Error parsing") else self.error
        return f"malformed {self.type_name}: {why[:1].lower()}{why[1:]}"


def type_name(deserializer: Deserializer) -> str:
    """The full name of the message type that `deserializer` (a message class's `FromString`) parses."""
    message_class = getattr(deserializer, "__self__", None)
    descriptor = getattr(message_class, "DESCRIPTOR", None)
    name = getattr(descriptor, "full_name", None)
    return name if isinstance(name, str) else getattr(deserializer, "__qualname__", "request")


def tolerant(deserializer: Deserializer) -> Deserializer:
    """`deserializer`, returning `Malformed` instead of raising for bytes it cannot parse."""
    name = type_name(deserializer)

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except (DecodeError, ValueError, TypeError) as exc:  # upb raises DecodeError; others ValueError
            return Malformed(name, str(exc) or type(exc).__name__)

    return parse


async def refuse(context: grpc.aio.ServicerContext[Any, Any], request: Malformed) -> None:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.details)


def _unary(behaviour: Callable[..., Any]) -> Callable[..., Any]:
    async def checked(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if isinstance(request, Malformed):
            await refuse(context, request)
        return await behaviour(request, context)

    return checked


def _unary_stream(behaviour: Callable[..., Any]) -> Callable[..., Any]:
    async def checked(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        if isinstance(request, Malformed):
            await refuse(context, request)
        async for item in behaviour(request, context):
            yield item

    return checked


async def _checked_requests(
    iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[Any]:
    async for request in iterator:
        if isinstance(request, Malformed):
            await refuse(context, request)
        yield request


def _stream_unary(behaviour: Callable[..., Any]) -> Callable[..., Any]:
    async def checked(iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await behaviour(_checked_requests(iterator, context), context)

    return checked


def _stream_stream(behaviour: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(behaviour):
        # It writes with context.write, and reads through the iterator (checked here) or with
        # context.read(), whose `Malformed` values are the servicer's to handle (the bot stream's
        # protocol fault).
        async def writer(iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> None:
            await behaviour(_checked_requests(iterator, context), context)

        return writer

    async def generator(
        iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        async for item in behaviour(_checked_requests(iterator, context), context):
            yield item

    return generator


def _sync(behaviour: Callable[..., Any], request_streaming: bool) -> Callable[..., Any]:
    """A behaviour of grpc's synchronous kind (run on a thread; its context's `abort` raises)."""

    def requests(iterator: Iterator[Any], context: Any) -> Iterator[Any]:
        for request in iterator:
            if isinstance(request, Malformed):
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.details)
            yield request

    def checked(request: Any, context: Any) -> Any:
        if request_streaming:
            return behaviour(requests(request, context), context)
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.details)
        return behaviour(request, context)

    return checked


def checked_handler(handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
    """`handler` with a tolerant deserializer, its behaviour refusing `Malformed` requests.

    A behaviour keeps its kind: a coroutine (which writes with `context.write`) stays one, an
    async generator stays one, a synchronous one stays synchronous (grpc.aio tells them apart
    to run them)."""
    behaviour: Callable[..., Any] | None = (
        handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
    )
    if behaviour is None or handler.request_deserializer is None:
        return handler  # raw bytes: nothing to parse
    codecs: dict[str, Any] = {
        "request_deserializer": tolerant(handler.request_deserializer),
        "response_serializer": handler.response_serializer,
    }
    if not (inspect.iscoroutinefunction(behaviour) or inspect.isasyncgenfunction(behaviour)):
        wrapped = _sync(behaviour, handler.request_streaming)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(wrapped, **codecs)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(wrapped, **codecs)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(wrapped, **codecs)
        return grpc.stream_stream_rpc_method_handler(wrapped, **codecs)
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(_unary(handler.unary_unary), **codecs)
    if handler.unary_stream is not None:
        wrap = _unary if inspect.iscoroutinefunction(behaviour) else _unary_stream
        return grpc.unary_stream_rpc_method_handler(wrap(behaviour), **codecs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(_stream_unary(handler.stream_unary), **codecs)
    return grpc.stream_stream_rpc_method_handler(_stream_stream(behaviour), **codecs)


class MalformedRequests(grpc.aio.ServerInterceptor):
    """Every method's requests parsed by `tolerant`: a malformed one is `INVALID_ARGUMENT`."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        return None if handler is None else checked_handler(handler)
