"""The load child process: ``python -m harness.load OPTIONS_JSON`` (started by ``harness load``).

gevent patches the standard library first, before anything imports socket, ssl or threading:
this process is the only one of the harness that runs on gevent.
"""

import os
import signal
import sys


def _before_the_run(signum, frame) -> None:
    """A signal while the engine starts (imports, reading the recordings): one line, no
    verdict, no traceback. The run installs its own handlers (harness.load.engine)."""
    os.write(2, f"harness load: interrupted by {signal.Signals(signum).name} before the run "
                f"started; no verdict\n".encode())
    os._exit(128 + signum)


for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _before_the_run)

from gevent import monkey  # noqa: E402

monkey.patch_all()

import json  # noqa: E402

#: The environment variable the parent hands the -H headers and credentials in.
SECRETS_ENV = "HARNESS_LOAD_SECRETS"

from harness.errors import HarnessError  # noqa: E402


def die_with_parent(parent: int | None) -> None:
    """End (SIGTERM: the run stops as on Ctrl-C) when the process that started this one dies,
    even by SIGKILL: at once on Linux (PR_SET_PDEATHSIG), else within a second (a watch)."""
    import os
    import signal

    if not parent:
        return
    from harness.lifeline import killed_with_parent

    killed_with_parent(signal.SIGTERM)

    def watch() -> None:
        import gevent

        while os.getppid() == parent:
            gevent.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    if os.getppid() != parent:  # it died before we got here
        os.kill(os.getpid(), signal.SIGTERM)
    import gevent

    gevent.spawn(watch)


def main(argv: list[str]) -> int:
    from harness.load.engine import run_from_options

    try:
        options = json.loads(argv[0])
        # The headers and credentials come through the environment, never the command line
        # (which every user of the machine can read): harness.commands.load.
        options.update(json.loads(os.environ.pop(SECRETS_ENV, "{}")))
        die_with_parent(options.get("parent"))
        return run_from_options(options)
    except HarnessError as exc:
        print(f"harness load: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def exit_now(code: int) -> None:
    """End the process without the interpreter's shutdown: Locust's ZeroMQ context waits
    forever at exit for messages to a master or worker that is gone (every file the run wrote
    is closed already)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]))
