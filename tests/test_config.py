"""harness.config: where settings come from and how they become a command's defaults (the CLI
runs of tests/test_hostile_targets.py cover harness.toml end to end)."""

from __future__ import annotations

import pytest

from harness import config
from harness.cli import build_parser
from harness.errors import UsageError


def parse(argv: list[str], cwd) -> object:
    parser = build_parser()
    commands = parser.get_default("commands")
    settings, source = config.load(config.explicit_path(argv), cwd)
    fill = config.apply(commands[argv[0]], argv[0], settings, source, list(commands),
                        config.known_dests(commands)) if source else (lambda args: None)
    args = parser.parse_args(argv)
    fill(args)
    return args


def test_pyproject_tool_harness_table_with_a_command_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.harness]\ntimeout = 7\nheaders = ["X-A: 1"]\n'
        '[tool.harness.diff]\ntimeout = 9\n', encoding="utf-8")
    certify = parse(["certify"], tmp_path)
    assert certify.timeout == 7 and certify.header == [("X-A", "1")]
    assert parse(["diff"], tmp_path).timeout == 9
    assert parse(["certify", "--timeout", "3", "-H", "X-B: 2"], tmp_path).header == [("X-B", "2")]


def test_harness_toml_wins_over_pyproject_and_config_flag_over_both(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\ntimeout = 7\n")
    (tmp_path / "harness.toml").write_text("timeout = 8\n")
    (tmp_path / "other.toml").write_text("timeout = 9\ninsecure = true\n")
    assert parse(["certify"], tmp_path).timeout == 8
    args = parse(["certify", "--config", str(tmp_path / "other.toml")], tmp_path)
    assert args.timeout == 9 and args.insecure is True


@pytest.mark.parametrize("text, said", [
    ("timeout = -1\n", "must be above 0"),
    ("insecure = 1\n", "true or false"),
    ("nope = 1\n", "unknown setting 'nope'"),
    ("timeout = [1]\n", "single value"),
    ("timeout = \n", "not TOML"),
])
def test_bad_settings_are_one_line_usage_errors(tmp_path, text, said):
    (tmp_path / "harness.toml").write_text(text)
    with pytest.raises(UsageError, match=said):
        parse(["certify"], tmp_path)


def test_missing_config_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="config"):
        parse(["certify", "--config", str(tmp_path / "none.toml")], tmp_path)
