"""Runs ``harness certify ARGS`` in this process with a timestamp (wall, and the CPU of this
process and of its waited-for children) at each phase's edge; prints them as JSON on stderr's
last line. bench_certify.py --phases runs it with each checkout's own Python, so the functions
it wraps are looked up by name and skipped where a checkout has none; it ends as that
checkout's ``harness`` program ends.

    .venv/bin/python bench/certify_phases.py certify --no-html
"""

from __future__ import annotations

import atexit
import contextlib
import json
import resource
import sys
import time

STARTED = time.perf_counter()
marks: list[tuple[str, float, float, float]] = []


def mark(what: str) -> None:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    marks.append((what, time.perf_counter() - STARTED, own.ru_utime + own.ru_stime,
                  children.ru_utime + children.ru_stime))


mark("start")
from harness import cli  # noqa: E402 (timed: the imports are a phase)
from harness.certify import engine  # noqa: E402

mark("imports")


def wrap(owner: object, name: str, label: str) -> None:
    """Mark the start and end of ``owner.name`` (a function), if it has one."""
    function = getattr(owner, name, None)
    if function is None:
        return

    def timed(*args, **kwargs):
        mark(f"{label} start")
        try:
            return function(*args, **kwargs)
        finally:
            mark(f"{label} end")

    setattr(owner, name, timed)


wrap(engine, "_contract_features", "features written")
wrap(engine, "_run_pytest", "pytest")
wrap(engine, "tidy", "results tidied")
wrap(engine, "redact_results", "results redacted")
wrap(engine, "write_overview", "overview")
wrap(engine, "_render_html", "html")
with contextlib.suppress(AttributeError):
    wrap(engine.HeldResults, "write", "results written")
reference = engine.target_or_reference


@contextlib.contextmanager
def timed_reference(*args, **kwargs):
    mark("reference start")
    with reference(*args, **kwargs) as url:
        mark("reference up")
        yield url
        mark("reference stop")
    mark("reference stopped")


engine.target_or_reference = timed_reference


class Marks:
    """pytest's own phases."""

    def pytest_collection(self) -> None:
        mark("collection start")

    def pytest_collection_finish(self) -> None:
        mark("collected")

    def pytest_sessionfinish(self) -> None:
        mark("scenarios run")


main = engine.pytest.main
engine.pytest.main = lambda args, plugins=(): main(args, plugins=[*plugins, Marks()])


@atexit.register  # also where harness.cli.program ends the process without a teardown
def said() -> None:
    mark("end")
    print(json.dumps(marks), file=sys.stderr, flush=True)


if hasattr(cli, "program"):  # as the harness program ends (python -m harness)
    cli.program()
sys.exit(cli.main(sys.argv[1:]))
