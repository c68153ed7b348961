"""Stopping a run on SIGINT (Ctrl-C) and SIGTERM (a cancelled CI job), the same way in every
command.

``harness.cli`` installs the handlers once (``handled``). The first signal asks the run to
stop: work that can stop at a boundary (a chunk of a recording, a call, a case) checks
``requested()`` and winds down, keeping what it finished; elsewhere KeyboardInterrupt is
raised (inside ``cooperative()`` it is not, but again in an ``interruptible()`` part of it:
the code there checks the flag). The command then writes what it has (console, JSON, JUnit,
Allure) marked interrupted and exits 130 (SIGINT) or 143 (SIGTERM): ``exit_code()``. A second
signal stops at once (the children first).

Worker processes (``harness.judge.streaming``) ignore the signals and follow the parent's
flag (``shared_event``): a Ctrl-C reaches the whole process group, and the parent decides.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_event = threading.Event()
#: An Event worker processes share (created when first asked for: ``shared_event``).
_shared: Any = None
_shared_method: str | None = None  # its context's start method
_received: int | None = None
_cooperative = 0
_command = "harness"
#: The file descriptor the lines of the signals are written to (``handled``).
_stderr = 2


@contextlib.contextmanager
def handled(command: str = "harness") -> Iterator[None]:
    """Within it, SIGINT and SIGTERM are handled as this module says, for ``command`` (its
    name in the lines said on stderr); the previous handlers come back after it. Outside the
    main thread (a command called from a thread) the handlers are left as they are."""
    global _command
    _command = command
    reset()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _stderr
    outer = _stderr
    # stderr as it is now: certify runs pytest in-process, which points fd 2 at a capture file
    # while a scenario runs (the line said there was lost)
    with contextlib.suppress(OSError):
        _stderr = os.dup(2)
    previous = {sig: signal.signal(sig, _handle) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if _stderr != outer:
            os.close(_stderr)
        _stderr = outer


def _say(line: str) -> None:
    """``line`` on the command's stderr, from a signal handler (a closed stderr says nothing)."""
    with contextlib.suppress(OSError):
        os.write(_stderr, f"\n{_command}: {line}\n".encode())


def _handle(signum: int, frame: Any) -> None:
    global _received
    name = signal.Signals(signum).name
    if _received is not None:  # the second signal: now
        _say(f"{name} again: stopping at once")
        for child in multiprocessing.active_children():
            with contextlib.suppress(Exception):
                child.kill()
        os._exit(128 + _received)
    _received = signum
    _event.set()
    if _shared is not None:
        _shared.set()
    _say(f"interrupted by {name}: finishing the work in flight and writing what ran (again to "
         "stop at once)")
    if not _cooperative:
        raise KeyboardInterrupt


def requested() -> bool:
    """Whether a stop was asked for (in this process, or in the parent of a worker)."""
    return _event.is_set() or (_shared is not None and _shared.is_set())


def signal_name() -> str | None:
    """``SIGINT`` or ``SIGTERM`` once one arrived (None before; ``SIGINT`` for a stop asked by
    a KeyboardInterrupt raised elsewhere)."""
    if _received is not None:
        return signal.Signals(_received).name
    return "SIGINT" if _event.is_set() else None


def exit_code(name: str | None = None) -> int:
    """128 + the signal's number: 130 for SIGINT, 143 for SIGTERM."""
    name = name or signal_name() or "SIGINT"
    return 128 + signal.Signals[name].value


def note_interrupt() -> str:
    """Record a stop that came as KeyboardInterrupt (e.g. from pytest): the signal's name."""
    _event.set()
    return signal_name() or "SIGINT"


def wait(seconds: float) -> bool:
    """Sleep up to ``seconds``, less when a stop is asked for; whether it was."""
    if _shared is not None:
        return _shared.wait(seconds) or _event.is_set()
    return _event.wait(seconds)


@contextlib.contextmanager
def cooperative() -> Iterator[None]:
    """Within it the first signal only sets the flag; the code checks ``requested()``."""
    global _cooperative
    _cooperative += 1
    try:
        yield
    finally:
        _cooperative -= 1


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within ``cooperative()``, a part where the first signal raises KeyboardInterrupt again:
    a wait for work the run can drop (certify's HTML render), cut short at once rather than
    waited for. A signal that came before it is not raised again: check ``requested()``
    inside it first."""
    global _cooperative
    outer, _cooperative = _cooperative, 0
    try:
        yield
    finally:
        _cooperative = outer


def shared_event(context: Any) -> Any:
    """An Event of ``context`` that ``requested()`` follows, for worker processes. (One per
    start method: an Event made for lint's forked workers cannot go to replay's forkserver
    ones, in one process.)"""
    global _shared, _shared_method
    method = context.get_start_method()
    if _shared is None or _shared_method != method:
        _shared, _shared_method = context.Event(), method
        if _event.is_set():
            _shared.set()
    return _shared


def in_worker(event: Any) -> None:
    """In a worker process: ignore SIGINT and SIGTERM and follow ``event`` (the parent's)."""
    global _shared
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)  # held while it was forked
    _shared = event


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within it SIGINT and SIGTERM wait (they arrive when it ends): around the fork of
    worker processes, which would otherwise take one for the command's before they ignore
    them (``in_worker``)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def reset() -> None:
    """Forget a stop (tests calling commands in-process one after another)."""
    global _received, _shared
    _received = None
    _event.clear()
    if _shared is not None:
        with contextlib.suppress(Exception):
            _shared.clear()


def interrupted_line(command: str) -> None:
    """Nothing could be kept (the run stopped before anything ran): say so on stderr."""
    print(f"harness {command}: interrupted by {signal_name() or 'SIGINT'}; nothing to report",
          file=sys.stderr)
