"""The hop between the grpc.aio thread and trio.

grpc.aio runs on its own thread with its own asyncio loop; trio owns the main
thread and every match.  They meet in two non-blocking one-way hops:

    trio  -> aio   loop.call_soon_threadsafe(...)     (BotLink.send / close)
    aio   -> trio  TrioToken.run_sync_soon(...)       (Bridge.to_trio)

grpc.aio objects are touched only on the aio thread, trio objects only on the trio
thread.  A callback given to `run_sync_soon` must never raise (trio would cancel
everything), so `to_trio` wraps each one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
import trio

from ..referee.seat import CloseReason
from ..v1 import arena_pb2 as pb

log = structlog.get_logger()

# How a bot stream ends when the referee closes it for a reason: the one place where the
# referee's reasons become gRPC statuses.
CLOSE_STATUS: dict[CloseReason, grpc.StatusCode] = {
    CloseReason.OVER: grpc.StatusCode.FAILED_PRECONDITION,
    CloseReason.REPLACED: grpc.StatusCode.ABORTED,
    CloseReason.INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    CloseReason.EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    CloseReason.UNSUPPORTED_VERSION: grpc.StatusCode.FAILED_PRECONDITION,
    CloseReason.ABORTED: grpc.StatusCode.ABORTED,
    CloseReason.DROPPED: grpc.StatusCode.UNAVAILABLE,
    CloseReason.REVOKED: grpc.StatusCode.UNAUTHENTICATED,
}

OUTBOX_LIMIT = 512
"""Messages queued for one bot; a bot that stops reading is dropped past this."""


@dataclass(frozen=True)
class Close:
    """Ask the stream's writer to end the call, with a status when `code` is set."""

    code: grpc.StatusCode | None = None
    details: str = ""


class Bridge:
    def __init__(self, trio_token: trio.lowlevel.TrioToken, loop: asyncio.AbstractEventLoop) -> None:
        self.trio_token = trio_token
        self.loop = loop
        # Each hop wakes the other thread through a socket, which costs far more than the
        # call itself; so calls are queued and one wake-up drains everything queued so far.
        self._to_aio: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._aio_wake_pending = False
        # Set on the trio thread when a call is queued for the aio loop and the loop is not woken
        # yet; `_AioWaker`, a trio instrument, wakes it once trio's current batch of tasks has run.
        self._aio_wake_due = False
        self._aio_waker: _AioWaker | None = None
        self._to_trio: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._trio_wake_pending = False

    def to_trio(self, fn: Callable[..., Any], *args: Any) -> None:
        """From the aio thread: run `fn(*args)` on the trio thread soon; never raises.

        Trio is woken by `_wake_trio`, a callback that runs after the callbacks the loop had
        ready: the messages read in one turn of the aio loop reach trio with one wake-up (the
        mirror of `to_aio`).
        """
        self._to_trio.append((fn, args))
        if not self._trio_wake_pending:
            self._trio_wake_pending = True
            self.loop.call_soon(self._wake_trio)

    def _wake_trio(self) -> None:  # aio thread
        with contextlib.suppress(trio.RunFinishedError):
            self.trio_token.run_sync_soon(self._drain_to_trio)

    def _drain_to_trio(self) -> None:  # trio thread
        self._trio_wake_pending = False
        queue = self._to_trio
        while queue:
            fn, args = queue.popleft()
            try:
                fn(*args)
            except Exception:  # a raising callback would crash the whole trio run
                log.exception("bridge callback failed", callback=getattr(fn, "__qualname__", repr(fn)))

    async def call_in_trio(self, fn: Callable[..., Any], *args: Any) -> Any:
        """From the aio thread: run sync `fn(*args)` on the trio thread and await its result."""
        future: asyncio.Future[Any] = self.loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if future.done():
                return
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

        def run() -> None:
            try:
                result = (True, fn(*args))
            except Exception as exc:
                result = (False, exc)
            self.to_aio(settle, *result)

        self.to_trio(run)
        return await future

    def to_aio(self, fn: Callable[..., Any], *args: Any) -> None:
        """From the trio thread: run `fn(*args)` on the aio loop soon; a closed loop is ignored.

        The aio loop is not woken here but by `_AioWaker`, just before trio waits for I/O, i.e.
        once every task trio had ready has run: all the matches answered in one wake-up of trio
        send their requests with one wake-up of the aio loop, and the aio thread does not take the
        GIL from trio while trio still has work (a wake-up in the middle of the batch cost a GIL
        hand-over each time).
        """
        self._to_aio.append((fn, args))
        if not self._aio_wake_pending:
            self._aio_wake_pending = True
            self._aio_wake_due = True
            if self._aio_waker is None:
                self._aio_waker = _AioWaker(self)
                trio.lowlevel.add_instrument(self._aio_waker)

    def wake_aio(self) -> None:  # trio thread
        """Wake the aio loop for the calls queued since it was last woken, if any."""
        if self._aio_wake_due:
            self._aio_wake_due = False
            with contextlib.suppress(RuntimeError):  # the loop has closed
                self.loop.call_soon_threadsafe(self._drain_to_aio)

    def _drain_to_aio(self) -> None:  # aio thread
        self._aio_wake_pending = False
        queue = self._to_aio
        while queue:
            fn, args = queue.popleft()
            try:
                fn(*args)
            except Exception:
                log.exception("bridge callback failed", callback=getattr(fn, "__qualname__", repr(fn)))


class Outbox:
    """The messages waiting for one stream's writer, on the aio thread: `asyncio.Queue`'s
    `put_nowait`, `get` and `qsize` for the one task that reads it, and nothing more.

    A message goes through it on every decision; `asyncio.Queue`'s bookkeeping (counting
    unfinished tasks, an `Event` cleared per put, a loop check per get) was about a tenth of the
    aio thread's time at 16 matches (docs/SERVER.md, "The profile again").
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def qsize(self) -> int:
        return len(self._items)

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def get(self) -> Any:
        while not self._items:
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # cancelled while waiting
                    self._waiter = None
        return self._items.popleft()


class _AioWaker(trio.abc.Instrument):
    """Wakes the bridge's aio loop right before trio waits for I/O (after every task it had ready).

    A trio system task did this before, woken by the first call queued: that cost a task step and
    one more turn of trio's loop (with its own `epoll_wait`) per batch, which at one match is one
    per decision. An instrument's hook must not raise (trio would drop it): `wake_aio` does not.
    """

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    def before_io_wait(self, timeout: float) -> None:
        self.bridge.wake_aio()


_link_ids = itertools.count(1)


class BotLink:
    """One bot stream as trio sees it: `send` and `close` cross to the aio thread."""

    def __init__(self, bridge: Bridge, peer: str) -> None:
        self.id = next(_link_ids)
        self.bridge = bridge
        self.peer = peer
        self.outbox = Outbox()  # used on the aio thread only
        self.open = True  # trio-side view: False once closed or disconnected

    def send(self, message: Any) -> None:
        """From trio: queue `message` for the bot (dropped if the link is closed).

        On a `BotService` stream the message may be a `ServerMessage` already encoded (see
        `add_bot_service`).
        """
        if self.open:
            self.bridge.to_aio(self._put, message)

    def close(self, reason: CloseReason | grpc.StatusCode | None = None, details: str = "") -> None:
        """From trio: end the stream, with an error status for a `reason` (the referee's, mapped by
        `CLOSE_STATUS`, or a status of the transport's own, as the lobby gives)."""
        if self.open:
            self.open = False
            code = CLOSE_STATUS[reason] if isinstance(reason, CloseReason) else reason
            self.bridge.to_aio(self.outbox.put_nowait, Close(code, details))

    def _put(self, message: Any) -> None:  # aio thread
        if self.outbox.qsize() >= OUTBOX_LIMIT:
            self.outbox.put_nowait(
                Close(grpc.StatusCode.RESOURCE_EXHAUSTED, "the bot does not read its stream")
            )
            return
        self.outbox.put_nowait(message)


def serialize_server_message(message: pb.ServerMessage | bytes) -> bytes:
    """`BotService`'s response serializer: the referee hands over its requests already encoded.

    It builds a `DecisionRequest` as wire bytes (`arena.protocol`); parsing them into a
    message on the trio thread only for grpc to serialize them again here cost both threads.
    """
    if isinstance(message, bytes):
        return message
    return message.SerializeToString()


def add_bot_service(servicer: Any, server: grpc.aio.Server) -> None:
    """`add_BotServiceServicer_to_server`, with `serialize_server_message` for the replies."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=pb.BotMessage.FromString,
            response_serializer=serialize_server_message,
        )
    }
    name = pb.DESCRIPTOR.services_by_name["BotService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
    server.add_registered_method_handlers(name, handlers)
