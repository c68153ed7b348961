"""The ``harness`` command. Each subcommand lives in its own module under ``harness.commands``
and registers itself with ``register(subparsers)``; this module only dispatches and turns
HarnessError into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import HarnessError

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("serve", "certify", "contract", "report", "capture", "export", "lint", "replay",
            "diff", "load", "probe", "mock")

DESCRIPTION = """\
Capture, replay, lint, certify and compare traffic of ASMX SOAP services (School Mobile).

Example:
  harness serve --port 8000    # the embedded reference on http://127.0.0.1:8000
  harness COMMAND --help       # each command's options, with a worked example

Exit status: 0 all good, 1 findings (a mandatory rule failed or a difference was found),
2 usage error, unreadable input or unreachable target."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for every usage error
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="harness", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"harness.commands.{name}").register(sub)
    parser.set_defaults(commands=sub.choices)
    return parser


def _configured(parser: argparse.ArgumentParser, argv: list[str]):
    """The config file's settings as defaults of the chosen command (harness.config); the
    step to run after parsing."""
    from harness import config

    commands = parser.get_default("commands")
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in commands:
        return lambda args: None
    settings, source = config.load(config.explicit_path(argv))
    if source is None:
        return lambda args: None
    return config.apply(commands[command], command, settings, source, list(commands),
                        config.known_dests(commands))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        fill = _configured(parser, argv)
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return exc.exit_code
    args = parser.parse_args(argv)
    try:
        fill(args)
        return int(args.run(args) or 0)
    except HarnessError as exc:
        print(f"harness {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
