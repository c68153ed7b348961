"""Large buffers freed go back to the system at once, in the command and every process it
starts.

glibc's malloc serves an allocation of 128 KiB or more with its own mapping, returned when
freed, but it raises that threshold to the size of each such block freed (up to 32 MiB): after
the first 1 MB header was freed, every later one came from the heap, which keeps what it
held. Replaying 320 exchanges with 1 MB headers so kept ~20 MB more in each worker process
(296-322 MB for the run's processes against a 300 MB bound). ``keep_large_frees_returned``
pins the threshold: in this process (``mallopt``) and, through the environment glibc reads as a
process starts, in every process started from it (forkserver, workers, load's workers).
Elsewhere than glibc (musl, macOS) there is nothing to do and nothing is done.
"""

from __future__ import annotations

import ctypes
import os

#: glibc's own default; pinned, it no longer rises.
MMAP_THRESHOLD = 128 << 10
#: The variable glibc reads at a process's start (the trailing underscore is its name).
ENVIRONMENT = "MALLOC_MMAP_THRESHOLD_"
#: mallopt's parameter number (malloc.h).
_M_MMAP_THRESHOLD = -3


def keep_large_frees_returned() -> None:
    """Pin malloc's threshold for a mapping of its own in this process and its children
    (a value the user set in the environment is kept)."""
    os.environ.setdefault(ENVIRONMENT, str(MMAP_THRESHOLD))
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no glibc: its allocator has no such threshold
        return
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt(_M_MMAP_THRESHOLD, int(os.environ[ENVIRONMENT]) if
            os.environ[ENVIRONMENT].isdigit() else MMAP_THRESHOLD)
