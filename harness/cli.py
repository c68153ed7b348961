"""The ``harness`` command. Each subcommand lives in its own module under ``harness.commands``
and registers itself with ``register(subparsers)``; this module only dispatches and turns
HarnessError into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import atexit
import difflib
import functools
import importlib
import os
import re
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from harness import __version__, allocator, stopping
from harness.errors import HarnessError

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("serve", "certify", "call", "contract", "report", "capture", "export", "lint",
            "replay", "diff", "shadow", "load", "probe", "mock", "scenarios")

DESCRIPTION = """\
Capture, replay, lint, certify and compare traffic of ASMX SOAP services (School Mobile).

Example:
  harness serve --port 8000    # the embedded reference on http://127.0.0.1:8000
  harness COMMAND --help       # each command's options, with a worked example

Exit status, for every command: 0 all good, 1 findings (a mandatory rule failed or a
difference was found), 2 usage error, unreadable input or unreachable target, 130 stopped by
Ctrl-C (SIGINT), 143 stopped by SIGTERM (a cancelled CI job): what was judged until then is
reported, marked interrupted."""


class _Parser(argparse.ArgumentParser):
    #: The dest of a repeatable positional that also takes the words after an option
    #: (``harness call Op --binding get id=7``: argparse alone leaves ``id=7`` unrecognised).
    trailing_positionals: str | None = None

    def parse_known_args(self, args=None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        if self.trailing_positionals and extras:
            words = [a for a in extras if not a.startswith("-")]
            getattr(namespace, self.trailing_positionals).extend(words)
            extras = [a for a in extras if a.startswith("-")]
        return namespace, extras

    def error(self, message: str) -> None:  # one line, exit 2, as for every usage error
        hint = did_you_mean(self, getattr(self, "_given", []), message)
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


def _close(word: str, candidates: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(parser: argparse.ArgumentParser, given: Sequence[str], message: str) -> str:
    """`` (did you mean X?)`` for the mistyped command or flag behind an argparse error
    (``certfy`` -> certify, ``--taget`` -> --target), else ''. Flags are looked up in the
    command the words name (``harness certify --taget``: certify's flags)."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        meant = _close(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        return f" (did you mean {meant}?)" if meant else ""
    scope = parser
    for word in given:
        if word == "--":
            break
        if word.startswith("--") and len(word) > 2:
            flag = word.split("=", 1)[0]
            known = [o for o in scope._option_string_actions if o.startswith("--")]
            if any(o.startswith(flag) for o in known):  # the flag, or a prefix argparse takes
                continue
            meant = _close(flag, known)
            if meant:
                return f" (did you mean {meant}?)"
            continue
        commands = [a for a in scope._actions if isinstance(a, argparse._SubParsersAction)]
        if commands and word in commands[0].choices:
            scope = commands[0].choices[word]
    return ""


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
    environment = config.chosen_environment(argv)
    if source is None:
        if environment is not None and any(a.dest == "env" for a in commands[command]._actions):
            config.environment_table(settings, environment, source)  # its one line
        return lambda args: None
    return config.apply(commands[command], command, settings, source, list(commands),
                        config.known_dests(commands), environment)


def _with_environment(argv: list[str], name: str) -> argparse.Namespace:
    """The command line ``argv`` parsed again as ``--env NAME`` would have it: the settings of
    a diff role named ``env:NAME`` (the file's top level, then [env.NAME], then the flags)."""
    rest, skip = [], False
    for arg in argv:
        if skip or arg == "--env" or arg.startswith("--env="):
            skip = arg == "--env"
            continue
        rest.append(arg)
    at = next(i for i, arg in enumerate(rest) if not arg.startswith("-")) + 1
    again = [*rest[:at], "--env", name, *rest[at:]]
    parser = build_parser()
    fill = _configured(parser, again)
    args = parser.parse_args(again)
    fill(args)
    return args


#: The umask every command runs with (files 0600, folders 0700), unless FOLLOW_UMASK is 1.
PRIVATE_UMASK = 0o077
FOLLOW_UMASK = "HARNESS_FOLLOW_UMASK"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    allocator.keep_large_frees_returned()  # big headers and bodies do not stay resident
    parser = build_parser()
    try:
        fill = _configured(parser, argv)
    except HarnessError as exc:  # the config file's: said as the command's own errors are
        command = next((a for a in argv if not a.startswith("-")), None)
        print(f"harness {command}: error: {exc}" if command else f"harness: error: {exc}",
              file=sys.stderr)
        return exc.exit_code
    args = parser.parse_args(argv)
    global _command_run
    _command_run = args.command
    args.with_environment = functools.partial(_with_environment, argv)
    # Recordings and reports may hold personal data: what the harness creates is its user's
    # only (files 0600, folders 0700), unless HARNESS_FOLLOW_UMASK=1 (docs/security.md).
    umask = None if os.environ.get(FOLLOW_UMASK) == "1" else os.umask(PRIVATE_UMASK)
    try:
        with stopping.handled(f"harness {args.command}"):
            try:
                fill(args)
                return int(args.run(args) or 0)
            except HarnessError as exc:
                if stopping.requested():  # an error the stop caused (a call cut short)
                    stopping.interrupted_line(args.command)
                    return stopping.exit_code()
                print(f"harness {args.command}: error: {exc}", file=sys.stderr)
                return exc.exit_code
            except KeyboardInterrupt:  # stopped where nothing could be kept
                stopping.interrupted_line(args.command)
                return stopping.exit_code()
    finally:
        if umask is not None:
            os.umask(umask)


#: Commands after which the ``harness`` program ends without the interpreter's teardown
#: (``program``): certify's run leaves about 100,000 objects, and freeing them one by one,
#: module by module, took 0.2 to 0.3 s of its wall time, after its last output was written;
#: lint's, 0.15 s (its workers are gone by then: the pool is shut down before the report).
QUICK_EXIT = frozenset({"certify", "lint"})
#: The command ``main`` ran last (None: none, or its arguments were refused).
_command_run: str | None = None


def program() -> NoReturn:
    """The ``harness`` program (its console script and ``python -m harness``): ``main``,
    then exit with its status. After a command of QUICK_EXIT, once the exit functions have
    run (temporary folders removed, logs flushed) and stdout and stderr are flushed, the
    process ends without tearing the interpreter down; if a thread that is not a daemon still
    runs, or stdout cannot be flushed (a closed pipe), it exits as Python does."""
    code = main()
    if _command_run not in QUICK_EXIT or any(
            thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
            for thread in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    program()
