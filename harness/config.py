"""Settings from a file, so that a CI job is one line: ``--config FILE``, else ``harness.toml``
in the current folder, else the ``[tool.harness]`` table of ``./pyproject.toml``.

Keys are the long option names of the command (dashes or underscores); plural spellings are
accepted for the repeatable ones (``headers``, ``operations``, ``bindings``, ``rules``). A
table named after a command (``[certify]``, ``[diff]``...; ``[tool.harness.certify]`` in a
pyproject) applies to that command only. A key no command knows is an error; a key this
command does not have is ignored (one file serves certify, replay and diff). Flags override the
file. ``${NAME}`` in a string is the environment variable NAME (secrets stay in CI variables);
relative ``values``/``cacert``/``cert``/``key`` paths are read from the file's folder.
Authentication keys are the flags' names too (``user = "CORP\\alice:${STAGING_PASSWORD}"``,
``ntlm = true``, ``cert``, ``wsse-user``, ``login-url``...; docs/authentication.md).
``headers`` may be a table (``Authorization = "Bearer ${TOKEN}"``), ``values`` a table of
per-operation tables.

Only commands with the ``--config`` option (``harness.commands.options.add_send_options``)
read the file.
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import UsageError

FILE_NAME = "harness.toml"
ALIASES = {"headers": "header", "operations": "operation", "bindings": "binding",
           "rules": "rule", "severities": "severity", "login_headers": "login_header",
           "pass": "cert_pass"}
PATH_KEYS = frozenset({"values", "cacert", "cert", "key"})
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def explicit_path(argv: Sequence[str]) -> str | None:
    """The ``--config FILE`` of a command line, read before argparse runs."""
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def load(explicit: str | None, cwd: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """The settings table and the file it came from ({} and None without a file)."""
    cwd = cwd or Path.cwd()
    if explicit:
        return _read(Path(explicit), explicit=True), Path(explicit)
    if (cwd / FILE_NAME).is_file():
        return _read(cwd / FILE_NAME), cwd / FILE_NAME
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        table = _read(pyproject).get("tool", {}).get("harness")
        if isinstance(table, dict):
            return table, pyproject
    return {}, None


def apply(parser: argparse.ArgumentParser, command: str, settings: Mapping[str, Any],
          source: Path, commands: Sequence[str], known: set[str]
          ) -> Callable[[argparse.Namespace], None]:
    """Set ``settings`` as ``parser``'s defaults; returns the step to call after parsing
    (repeatable options: the file's list unless the flag was given)."""
    actions = {a.dest: a for a in parser._actions}
    if "config" not in actions:
        return lambda args: None
    flat = {k: v for k, v in settings.items() if not (k in commands and isinstance(v, dict))}
    flat.update(settings.get(command, {}) if isinstance(settings.get(command), dict) else {})
    defaults: dict[str, Any] = {}
    lists: dict[str, list[Any]] = {}
    for key, value in flat.items():
        dest = ALIASES.get(key.replace("-", "_"), key.replace("-", "_"))
        if dest not in known:
            raise UsageError(f"{source}: unknown setting {key!r}")
        action = actions.get(dest)
        if action is None:
            continue
        value = _expanded(value, source)
        if dest in PATH_KEYS and isinstance(value, str):
            value = str((source.parent / value) if not Path(value).is_absolute() else value)
        if isinstance(action, argparse._AppendAction):
            lists[dest] = _as_list(key, value, action, source)
        else:
            defaults[dest] = _converted(key, value, action, source)
    parser.set_defaults(**defaults)

    def fill(args: argparse.Namespace) -> None:
        for dest, value in lists.items():
            if not getattr(args, dest, None):
                setattr(args, dest, value)
    return fill


def known_dests(parsers: Mapping[str, argparse.ArgumentParser]) -> set[str]:
    return {a.dest for p in parsers.values() for a in p._actions} | {"values"}


def _read(path: Path, explicit: bool = False) -> dict[str, Any]:
    from harness.files import CONFIG_LIMIT, read_limited

    raw = read_limited(path, CONFIG_LIMIT, "config")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {path}: not TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nesting level
        raise UsageError(f"config {path}: nested too deeply") from None


def _expanded(value: Any, source: Path) -> Any:
    if isinstance(value, str):
        def var(match: re.Match[str]) -> str:
            if match[1] not in os.environ:
                raise UsageError(f"{source}: ${{{match[1]}}} is not set in the environment")
            return os.environ[match[1]]
        return _VAR.sub(var, value)
    if isinstance(value, list):
        return [_expanded(v, source) for v in value]
    if isinstance(value, dict):
        return {k: _expanded(v, source) for k, v in value.items()}
    return value


def _as_list(key: str, value: Any, action: argparse.Action, source: Path) -> list[Any]:
    if isinstance(value, dict) and action.dest in ("header", "login_header"):
        value = [f"{k}: {v}" for k, v in value.items()]
    if isinstance(value, dict) and action.dest == "severity":  # [severity] R2-... = "warning"
        value = [f"{k}={v}" for k, v in value.items()]
    items = value if isinstance(value, list) else [value]
    return [_converted(key, item, action, source) for item in items]


def _converted(key: str, value: Any, action: argparse.Action, source: Path) -> Any:
    if action.nargs == 0:  # a switch such as --insecure
        if not isinstance(value, bool):
            raise UsageError(f"{source}: {key} must be true or false")
        return value
    if isinstance(value, (dict, list)):
        if action.dest == "values" and isinstance(value, dict):
            return value  # per-operation tables, checked by Values.load
        raise UsageError(f"{source}: {key} must be a single value")
    if isinstance(value, bool):
        raise UsageError(f"{source}: {key} is not a switch")
    if action.type is None:
        return str(value)
    try:
        return action.type(str(value))  # type: ignore[misc]
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise UsageError(f"{source}: {key}: {exc}") from None
