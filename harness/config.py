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

Named environments: ``[env.staging]``, ``[env.preprod]`` hold the same keys (and command tables,
``[env.staging.certify]``) for one deployment each; ``--env NAME`` lays that table over the top
level: the file's top level, its command table, the environment, the environment's command
table, then the flags, each replacing what came before (a ``headers`` or ``values`` table
whole). Reports name the environment.

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
    return _option(argv, "--config")


def chosen_environment(argv: Sequence[str]) -> str | None:
    """The ``--env NAME`` of a command line, read before argparse runs."""
    return _option(argv, "--env")


def _option(argv: Sequence[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"{flag}="):
            return arg.split("=", 1)[1]
    return None


def load(explicit: str | None, cwd: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """The settings table and the file it came from ({} and None without a file)."""
    if explicit:
        return _read(Path(explicit), explicit=True), Path(explicit)
    cwd = cwd or Path()  # the current folder, named as the user names it (./harness.toml)
    if (cwd / FILE_NAME).is_file():
        return _read(cwd / FILE_NAME), cwd / FILE_NAME
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        table = _read(pyproject).get("tool", {}).get("harness")
        if isinstance(table, dict):
            return table, pyproject
    return {}, None


def apply(parser: argparse.ArgumentParser, command: str, settings: Mapping[str, Any],
          source: Path, commands: Sequence[str], known: set[str],
          environment: str | None = None) -> Callable[[argparse.Namespace], None]:
    """Set ``settings`` (with the named ``environment`` laid over them) as ``parser``'s
    defaults; returns the step to call after parsing (repeatable options: the file's list
    unless the flag was given)."""
    actions = {a.dest: a for a in parser._actions}
    if "config" not in actions:
        return lambda args: None
    _environments(settings, source)
    layers = [(settings, str(source))]
    if environment is not None:
        layers.append((environment_table(settings, environment, source),
                       f"{source} [env.{environment}]"))
    flat: dict[str, tuple[Any, str]] = {}
    for layer, where in layers:
        own = layer.get(command)
        flat.update({k: (v, where) for k, v in layer.items()
                     if k != ENVIRONMENTS and not (k in commands and isinstance(v, dict))})
        flat.update({k: (v, f"{where} [{command}]") for k, v in own.items()}
                    if isinstance(own, dict) else {})
    defaults: dict[str, Any] = {"env": environment} if environment is not None else {}
    lists: dict[str, list[Any]] = {}
    for key, (value, where) in flat.items():
        dest = ALIASES.get(key.replace("-", "_"), key.replace("-", "_"))
        if dest not in known:
            from harness.contract.bindings import did_you_mean

            meant = did_you_mean(key, sorted(k.replace("_", "-") for k in known if k != "env"))
            raise UsageError(f"{where}: unknown setting {key!r}{meant}")
        action = actions.get(dest)
        if action is None:
            continue
        value = _expanded(value, where)
        if dest in PATH_KEYS and isinstance(value, str):
            value = str((source.parent / value) if not Path(value).is_absolute() else value)
        if isinstance(action, argparse._AppendAction):
            lists[dest] = _as_list(key, value, action, where)
        else:
            defaults[dest] = _converted(key, value, action, where)
    parser.set_defaults(**defaults)

    def fill(args: argparse.Namespace) -> None:
        if getattr(args, "env", None) != environment:  # argparse took an abbreviation
            raise UsageError(f"--env {args.env}: spell the option in full (--env NAME)")
        for dest, value in lists.items():
            if not getattr(args, dest, None):
                setattr(args, dest, value)
    return fill


def known_dests(parsers: Mapping[str, argparse.ArgumentParser]) -> set[str]:
    return {a.dest for p in parsers.values() for a in p._actions} | {"values"}


#: The table of named environments: ``[env.NAME]``.
ENVIRONMENTS = "env"


def environment_table(settings: Mapping[str, Any], name: str, source: Path | None
                      ) -> Mapping[str, Any]:
    """The ``[env.NAME]`` table of ``settings``; a UsageError of one line (with a
    did-you-mean) when the file has no such environment."""
    if source is None:
        raise UsageError(f"--env {name}: no config file defines environments (./{FILE_NAME}, "
                         "[tool.harness] of ./pyproject.toml, or --config FILE)")
    tables = _environments(settings, source)
    if name not in tables:
        from harness.contract.bindings import did_you_mean

        known = ", ".join(tables) or "none"
        raise UsageError(f"--env {name}: {source} has no [env.{name}]"
                         f"{did_you_mean(name, tables)} (environments: {known})")
    return tables[name]


def _environments(settings: Mapping[str, Any], source: Path) -> Mapping[str, Any]:
    tables = settings.get(ENVIRONMENTS, {})
    if not isinstance(tables, dict) or not all(isinstance(v, dict) for v in tables.values()):
        raise UsageError(f"{source}: env holds one table per environment: [env.NAME]")
    return tables


def _read(path: Path, explicit: bool = False) -> dict[str, Any]:
    from harness.files import CONFIG_LIMIT, check_entries, read_limited

    raw = read_limited(path, CONFIG_LIMIT, "config")
    try:
        text = raw.decode("utf-8")
        check_entries(text, path, "config", toml=True)
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"config {path}: not TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nesting level
        raise UsageError(f"config {path}: nested too deeply") from None


def expanded(value: Any, source: str) -> Any:
    """``value`` with ``${NAME}`` replaced by the environment variable NAME (in lists and
    tables too); a UsageError naming ``source`` when one is not set."""
    return _expanded(value, source)


def _expanded(value: Any, source: str) -> Any:
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


def _as_list(key: str, value: Any, action: argparse.Action, source: str) -> list[Any]:
    if isinstance(value, dict) and action.dest in ("header", "login_header"):
        value = [f"{k}: {v}" for k, v in value.items()]
    if isinstance(value, dict) and action.dest == "severity":  # [severity] R2-... = "warning"
        value = [f"{k}={v}" for k, v in value.items()]
    items = value if isinstance(value, list) else [value]
    return [_converted(key, item, action, source) for item in items]


def _converted(key: str, value: Any, action: argparse.Action, source: str) -> Any:
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
