"""Worker processes die with the command that started them, however it ends (kill -9 too).

A ``ProcessPoolExecutor`` worker waits on its call queue for work, and that queue never
reaches end-of-file while the worker itself holds both ends of it: after a kill -9 of lint,
replay or mock, 3-4 workers (~110 MB each) stayed for minutes, finishing chunks for no one.
A worker calls ``die_with(owner)`` as it starts (its pool's ``initializer``):

- the kernel kills it when its parent ends (``PR_SET_PDEATHSIG``, Linux): at once, even while
  it runs C code holding the GIL. That covers the children of a ``spawn`` pool (the mock's
  indexers), whose parent is the command;
- a watch thread ends it when ``owner`` ends: the children of a ``forkserver`` pool (lint's and
  replay's workers) are the forkserver's, and the forkserver lives as long as any of them
  holds its pipe, so the parent's death says nothing to them. The thread blocks on a pidfd of
  ``owner`` (Linux), else checks it every ``POLL_SECONDS``.

Once the workers are gone, the forkserver and multiprocessing's resource tracker see their
pipes close and end too.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
from collections.abc import Callable

#: prctl's option number (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Seconds between checks of the owner where there is no pidfd (not Linux).
POLL_SECONDS = 1.0


def die_with(owner: int) -> None:
    """In a worker process: end at once when process ``owner`` (the command) ends."""
    if os.getppid() == owner:
        killed_with_parent()
    if not _alive(owner):  # it ended before we got here
        _end()
    threading.Thread(target=_watch, args=(owner,), name="lifeline", daemon=True).start()


def killed_with_parent(sig: int = signal.SIGKILL) -> None:
    """The kernel sends ``sig`` to this process when its parent ends (Linux; elsewhere
    nothing). The parent is the thread that forked this process: a child made from a thread
    that ends before it gets ``sig`` then."""
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, sig)


def child_killed_with_us() -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess``: the child (a program: Allure's Node renderer) gets
    SIGKILL when the calling thread's process ends. None where there is no prctl."""
    prctl = _prctl()  # looked up here: between fork and exec the child only calls it
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it ended before the line above
            os._exit(1)
    return preexec


def _prctl() -> Callable[[int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's (the pid was reused)
        pass
    return True


def _watch(owner: int) -> None:
    try:
        handle = os.pidfd_open(owner)
    except ProcessLookupError:
        _end()
    except (AttributeError, OSError):  # no pidfd: poll
        while _alive(owner):
            threading.Event().wait(POLL_SECONDS)
        _end()
    else:
        select.select([handle], [], [])  # readable once the process has ended
        _end()


def _end() -> None:
    """Now, without cleanup: the results have no one to go to."""
    os._exit(1)
