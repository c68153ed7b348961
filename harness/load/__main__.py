"""The load child process: ``python -m harness.load OPTIONS_JSON`` (started by ``harness load``).

gevent patches the standard library first, before anything imports socket, ssl or threading:
this process is the only one of the harness that runs on gevent.
"""

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import sys  # noqa: E402

from harness.errors import HarnessError  # noqa: E402


def main(argv: list[str]) -> int:
    from harness.load.engine import run_from_options

    try:
        return run_from_options(json.loads(argv[0]))
    except HarnessError as exc:
        print(f"harness load: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
