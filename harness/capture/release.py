"""``Release``: an answer held until its exchange is recorded, let go in the same callback that
learns it may go.

Capture holds each answer until the recording writer acknowledges its exchange. With asyncio
futures, each link of that chain (the writer's acknowledgement, the response hook's result,
the connection handler taking its layers on) ran its callbacks one event-loop iteration after
the one before: three iterations on every answer's path, each letting every other
connection's ready events go first. A ``Release`` runs its callbacks at once, in order, when
it is settled; mitmproxy's own hook path (a task) awaits it like a future.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from typing import Any

logger = logging.getLogger(__name__)


class Release:
    """Settled once, with an exception or without; ``then`` callbacks run when it is."""

    __slots__ = ("_callbacks", "_waiter", "exception")

    def __init__(self) -> None:
        self._callbacks: list[Callable[[], None]] | None = []
        self._waiter: asyncio.Future[None] | None = None
        self.exception: BaseException | None = None

    @classmethod
    def of(cls, future: asyncio.Future[Any]) -> Release:
        """Settled when ``future`` is done (a loop iteration later, as futures go), with its
        exception; a cancelled future settles without one."""
        release = cls()

        def done(_: asyncio.Future[Any]) -> None:
            release.settle(None if future.cancelled() else future.exception())

        future.add_done_callback(done)
        return release

    def settled(self) -> bool:
        return self._callbacks is None

    def then(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once this is settled: now, if it is."""
        if self._callbacks is None:
            callback()
        else:
            self._callbacks.append(callback)

    def settle(self, exception: BaseException | None = None) -> None:
        """Run the callbacks, in the order they came; one that raises is logged and the
        others still run. Settling twice does nothing."""
        callbacks, self._callbacks = self._callbacks, None
        if callbacks is None:
            return
        self.exception = exception
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.error("error releasing a held answer", exc_info=True)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __await__(self) -> Generator[Any, None, None]:
        if self._callbacks is not None:
            if self._waiter is None:
                self._waiter = asyncio.get_running_loop().create_future()
            yield from self._waiter.__await__()
        if self.exception is not None:
            raise self.exception
