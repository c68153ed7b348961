"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``): the parts of the pages that
would drift if written by hand are made at build time.

Directives a page may hold (each on a line of its own, except ``{{ run: ... }}``):

``<!-- generated: NAME -->``
    a reference made from the code: ``commands`` (every ``harness`` command, from
    ``harness.cli.build_parser()``: a new command appears with no edit here), ``rules`` (the
    binding and WSDL catalogue, the table ``harness certify --list-rules`` prints),
    ``rules-probe``, ``rules-replay``, ``rules-diff``, ``rules-sending``; ``contract`` (the
    School Mobile contract page and its clauses, linked from the rule tables:
    ``contract_page.py``); and
    ``examples-rules`` (``-sending``, ``-replay``, ``-diff``, ``-probe``): a real failure of
    every rule (``rule_examples.py`` beside this file); ``steps`` (every sentence of the step
    vocabulary with its example, from the step definitions) and ``recorded-feature`` (what
    ``harness scenarios`` writes from the sample recording): ``step_reference.py``.
``<!-- run: COMMAND [; match: REGEX] [; max: N] [; status: N] -->``
    a fenced block with what ``COMMAND`` (``harness ...``) prints when the site is built, only
    the lines matching REGEX when given (at most N). The status must be N when given, else 0
    or 1 (a usage error fails the build).
``<!-- include: PATH [; lines: N M ...] [; as: LANGUAGE] -->``
    those lines of a file of the repository (e.g. a committed sample recording), or all of it
    (a CI recipe: ``ci/``), highlighted as LANGUAGE when given.
``{{ run: COMMAND ; match: REGEX }}`` (inline)
    group 1 of REGEX in that output: a figure quoted in a sentence.

Every command runs once per build, in a scratch folder holding ``recordings/`` and ``tests/``
of the repository. After the build, every HTML and CSS file is searched for scripts, styles or fonts
loaded from the network: the site must open offline and call nobody (``external_resources``).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
from functools import cache
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]

_GENERATED = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.M)
_RUN_BLOCK = re.compile(r"^<!-- run: (.+?) -->$", re.M)
_INCLUDE = re.compile(r"^<!-- include: (\S+)(?: ; lines: ([\d ]+))?(?: ; as: (\w+))? -->$", re.M)
_RUN_INLINE = re.compile(r"(?<!`)\{\{ run: (.+?) \}\}")  # `{{ run: ... }}` in backticks is text


# ------------------------------------------------------------------------ the command reference


def _cell(text: str) -> str:
    """Text for a Markdown table cell: no HTML read into it, no column break."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _option_names(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    value = ""
    if action.nargs != 0:
        metavar = action.metavar or (
            "{" + ",".join(map(str, action.choices)) + "}" if action.choices
            else action.dest.upper())
        value = f" {metavar if isinstance(metavar, str) else ' '.join(metavar)}"
    return ", ".join(f"`{name}{value}`" for name in action.option_strings)


def _default(action: argparse.Action) -> str:
    default = action.default
    if action.nargs == 0 or default in (None, argparse.SUPPRESS) or default == [] \
            or isinstance(default, bool):
        return ""
    if isinstance(default, (list, tuple)):
        default = " ".join(map(str, default))
    return f"`{default}`"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help:
        return ""
    return parser._get_formatter()._expand_help(action)  # expands %(default)s and the like


def _description(text: str | None) -> list[str]:
    """A parser's description as Markdown: its paragraphs, and the lines after "Example:" (up
    to the next blank line) as a shell block."""
    out: list[str] = []
    for paragraph in (text or "").split("\n\n"):
        head, _, example = paragraph.partition("Example:\n")
        if head.strip():
            out += [html.escape(" ".join(head.split()), quote=False), ""]
        if example.strip():
            out += ["Example:", "", "```sh", textwrap.dedent(example).strip(), "```", ""]
    return out


def _command_section(name: str, parser: argparse.ArgumentParser, summary: str,
                     depth: int = 2) -> list[str]:
    """One command: what it does, its example, usage and every option with its default."""
    anchor = name.replace(" ", "-")
    out = [f"{'#' * depth} `{name}` {{ #{anchor} }}", ""]
    out += [*_description(parser.description or summary),
            "```text", parser.format_usage().strip(), "```", ""]
    nested: list[tuple[str, argparse.ArgumentParser, str]] = []
    for group in parser._action_groups:
        rows = []
        for action in group._group_actions:
            if action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                nested += [(f"{name} {sub}", p, helps.get(sub, ""))
                           for sub, p in action.choices.items()]
                continue
            rows.append(f"| {_option_names(action)} | {_default(action)} | "
                        f"{_cell(_help(parser, action))} |")
        if rows:
            out += [f"**{_cell(group.title or 'options')}**", "",
                    "| option | default | meaning |", "|---|---|---|", *rows, ""]
    if parser.epilog:
        out += ["```text", parser.epilog.strip(), "```", ""]
    for sub_name, sub_parser, sub_summary in nested:
        out += _command_section(sub_name, sub_parser, sub_summary, depth + 1)
    return out


def commands_reference() -> str:
    """Every ``harness`` command from the parser the CLI runs: a command added to
    ``harness.cli.COMMANDS`` appears here with no edit."""
    from harness.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {a.dest: a.help or "" for a in sub._choices_actions}
    out = ["```text", parser.format_usage().strip(), "```", "", *_description(parser.description)]
    out += ["| command | what it does |", "|---|---|"]
    out += [f"| [`{name}`](#harness-{name}) | {_cell(summaries.get(name, ''))} |"
            for name in sub.choices]
    out.append("")
    for name, command in sub.choices.items():
        out += _command_section(f"harness {name}", command, summaries.get(name, ""))
    return "\n".join(out)


# ------------------------------------------------------------------------------ the rule tables


def _titles_table(titles: dict[str, str], level: dict[str, str] | None = None) -> str:
    lines = ["| rule | level | title |", "|---|---|---|"]
    lines += [f"| `{rule}` | {(level or {}).get(rule, 'failure')} | {_cell(title)} |"
              for rule, title in titles.items()]
    return "\n".join(lines)


def _probe_rules() -> str:
    from harness.probe.checks import rules_table

    return rules_table()


def _replay_rules() -> str:
    from harness.replay.engine import REPLAY_RULES

    return _titles_table(REPLAY_RULES)


def _diff_rules() -> str:
    from harness.diff.engine import TITLES

    return _titles_table({k: v for k, v in TITLES.items() if k != "SEC-LEAK"},
                         {"DIFF-FAULT-REASON": "warning",
                          "CROSS-BINDING": "failure for the candidate, warning for the primary"})


def _shadow_rules() -> str:
    from harness.shadow.worker import COMPARED_RULE, COMPARED_TITLE

    return _titles_table({COMPARED_RULE: COMPARED_TITLE}, {COMPARED_RULE: "warning"})


def _sending_rules() -> str:
    from harness.judge.sending import RULE_TITLES

    return _titles_table(RULE_TITLES)


def _catalogue() -> str:
    from harness.judge.rules import catalogue_table

    return catalogue_table(_cell, _beside("contract_page").clause_links)


def _examples(family: str):
    def table() -> str:
        sys.path.insert(0, str(Path(__file__).parent))
        try:
            import rule_examples
        finally:
            sys.path.pop(0)
        try:
            found = rule_examples.examples(family)
        except rule_examples.NoExample as exc:
            raise PluginError(f"docs: rule examples: {exc}") from None
        lines = ["| rule | sent or answered | what the harness reports |", "|---|---|---|"]
        lines += [f'| <span id="example-{rule}"></span>`{rule}` | {what} | '
                  f'<code>{html.escape(text, quote=False).replace("|", "&#124;")}</code> |'
                  for rule, what, text in found]
        return "\n".join(lines)
    return table


GENERATORS = {
    "commands": commands_reference,
    "rules": _catalogue,
    "rules-probe": _probe_rules,
    "rules-replay": _replay_rules,
    "rules-diff": _diff_rules,
    "rules-sending": _sending_rules,
    "rules-shadow": _shadow_rules,
    **{f"examples-{family}": _examples(family)
       for family in ("rules", "sending", "replay", "diff", "shadow", "probe")},
    "contract": lambda: _beside("contract_page").contract_page(),
    "steps": lambda: _beside("step_reference").step_reference(),
    "recorded-feature": lambda: _beside("step_reference").recorded_feature(),
}


def _beside(name: str):
    """A module of this folder (the hooks are loaded by path, not as a package)."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


# ---------------------------------------------------------------------------- commands' output


class _Run:
    def __init__(self, spec: str) -> None:
        parts = [p.strip() for p in spec.split(";")]
        self.command = parts[0]
        options = dict(p.split(":", 1) for p in parts[1:])
        self.match = re.compile(options["match"].strip()) if "match" in options else None
        self.max = int(options.get("max", 0)) or None
        self.status = int(options["status"]) if "status" in options else None


@cache
def _scratch() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="harness-docs-"))
    for name in ("recordings", "tests"):  # the samples, and the test services' contracts
        (folder / name).symlink_to(ROOT / name)
    return folder


@cache
def _output(command: str) -> tuple[int, str]:
    argv = shlex.split(command)
    if not argv or argv[0] != "harness":
        raise PluginError(f"docs: only harness commands run at build time, not {command!r}")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "CI": "true"}
    try:
        done = subprocess.run([sys.executable, "-m", "harness", *argv[1:]], cwd=_scratch(),
                              capture_output=True, text=True, timeout=300, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PluginError(f"docs: {command!r} did not finish in 300 s") from None
    return done.returncode, done.stdout + done.stderr


def _lines(run: _Run, page: str) -> list[str]:
    status, text = _output(run.command)
    if (run.status is not None and status != run.status) or \
            (run.status is None and status not in (0, 1)):
        raise PluginError(f"docs: {page}: {run.command!r} exited {status}:\n{text[-2000:]}")
    lines = text.rstrip("\n").splitlines()
    if run.match:
        lines = [line for line in lines if run.match.search(line)]
    if run.max:
        lines = lines[:run.max]
    if not lines:
        raise PluginError(f"docs: {page}: nothing of {run.command!r} matches "
                          f"{run.match.pattern if run.match else ''!r}:\n{text[-2000:]}")
    return lines


def _block(match: re.Match[str], page: str) -> str:
    return "\n".join(["```text", *_lines(_Run(match.group(1)), page), "```"])


def _inline(match: re.Match[str], page: str) -> str:
    run = _Run(match.group(1))
    if run.match is None or run.match.groups < 1:
        raise PluginError(f"docs: {page}: an inline run needs a match with a group: "
                          f"{match.group(0)}")
    found = run.match.search(_lines(run, page)[0])
    assert found is not None
    return found.group(1)


def expand(markdown: str, page: str) -> str:
    """The page's directives replaced by what they make (PluginError for an unknown one)."""
    def generated(match: re.Match[str]) -> str:
        make = GENERATORS.get(match.group(1))
        if make is None:
            raise PluginError(f"docs: {page}: no generator {match.group(1)!r} "
                              f"(known: {', '.join(GENERATORS)})")
        return make()

    def include(match: re.Match[str]) -> str:
        path = ROOT / match.group(1)
        if not path.is_file() or ROOT not in path.resolve().parents:
            raise PluginError(f"docs: {page}: no file {match.group(1)} in the repository")
        lines = path.read_text(encoding="utf-8").splitlines()
        wanted = [int(n) for n in (match.group(2) or "").split()] or range(1, len(lines) + 1)
        if max(wanted) > len(lines):
            raise PluginError(f"docs: {page}: {match.group(1)} has {len(lines)} lines")
        fence = "````" if any(line.startswith("```") for line in lines) else "```"
        return "\n".join([f"{fence}{match.group(3) or 'text'}", *(lines[n - 1] for n in wanted),
                          fence])

    markdown = _GENERATED.sub(generated, markdown)
    markdown = _INCLUDE.sub(include, markdown)
    markdown = _RUN_BLOCK.sub(lambda m: _block(m, page), markdown)
    return _RUN_INLINE.sub(lambda m: _inline(m, page), markdown)


# ----------------------------------------------------------------------- nothing from the network

#: A resource the browser would load by itself: a script, a stylesheet, a preload, an icon, an
#: image, a frame, a CSS import or url(): none may name a remote host.
_LOADS = re.compile(
    r"""<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\ssrc\s*=\s*["']?((?:https?:)?//[^"'\s>]+)"""
    r"""|<link\b[^>]*\shref\s*=\s*["']?((?:https?:)?//[^"'\s>]+)"""
    r"""|@import\s+(?:url\()?\s*["']?((?:https?:)?//[^"')\s]+)"""
    r"""|url\(\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)
#: Analytics and web-font hosts are refused wherever they appear (an inline script may build
#: its URL out of parts the pattern above cannot see).
_HOSTS = re.compile(r"googletagmanager|google-analytics|fonts\.googleapis|fonts\.gstatic", re.I)


def external_resources(site: Path) -> list[str]:
    """``file: URL`` for every resource of the built site loaded from the network."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".js":  # bundles name hosts in code paths the site never takes
            continue
        for match in _LOADS.finditer(text):
            url = next(g for g in match.groups() if g)
            found.append(f"{path.relative_to(site)}: {url}")
        found += [f"{path.relative_to(site)}: {m.group(0)}" for m in _HOSTS.finditer(text)]
    return found


# -------------------------------------------------------------------------------- MkDocs events


def on_page_markdown(markdown: str, page, config, files) -> str:
    return expand(markdown, page.file.src_uri)


def on_post_build(config) -> None:
    found = external_resources(Path(config["site_dir"]))
    if found:
        raise PluginError("docs: the site loads from the network (it must open offline):\n  "
                          + "\n  ".join(found[:20]))
