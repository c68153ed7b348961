"""``harness`` with a signal sent from inside it at a named point of its run: a deterministic
moment (the last second of certify: between pytest's end and the reports, during the console
report, during the HTML render) that a signal from outside, after a sleep, would only hit by
luck.

    python tests/signal_at.py MODULE:QUALNAME SIGNALS WHO [ARGS...]

runs ``harness ARGS`` with ``MODULE.QUALNAME`` (a function, or a method ``Class.method``)
wrapped: on its first call, before it runs, the process sends SIGNALS (``SIGINT``, or
``SIGINT,SIGINT`` for a second signal straight after the first) to itself (WHO ``self``: a CI
runner's SIGTERM to the command) or to its whole process group (WHO ``group``: a Ctrl-C at a
terminal, which reaches Allure's Node renderer too). Start it in a session of its own
(``start_new_session``): its group is then the command and its children only.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any

import psutil


def signal_at(where: str, signals: list[signal.Signals], who: str) -> None:
    module_name, _, qualname = where.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    fired = False

    @functools.wraps(original)
    def signalling(*args: Any, **kwargs: Any) -> Any:
        nonlocal fired
        if not fired:
            fired = True
            for sig in signals:
                if who == "group":
                    os.killpg(os.getpgrp(), sig)
                else:
                    signal.raise_signal(sig)
        return original(*args, **kwargs)

    setattr(owner, name, signalling)


def main() -> None:
    where, names, who, *args = sys.argv[1:]
    if who not in ("self", "group"):
        raise SystemExit(f"signal_at: WHO is self or group, not {who!r}")
    if who == "group" and os.getpgrp() != os.getpid():
        raise SystemExit("signal_at: group needs a session of its own (start_new_session)")
    signal_at(where, [signal.Signals[name] for name in names.split(",")], who)
    sys.argv = ["harness", *args]
    from harness.cli import main as harness

    code = harness()
    # The command stops what it started (Allure's Node renderer) itself, not only by dying
    # (which the kernel turns into a SIGKILL of its children): a program calling certify
    # in-process keeps nothing running either.
    left = [f"{child.pid} {' '.join(child.cmdline()[:2])}"
            for child in psutil.Process().children(recursive=True)
            if child.status() != psutil.STATUS_ZOMBIE]
    if left:
        print(f"signal_at: still running as the command ends: {'; '.join(left)}",
              file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
