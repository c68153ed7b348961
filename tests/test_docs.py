"""The documentation: the MkDocs site builds with --strict and opens offline, every option of
every command and every rule is in it, and the README stays short, true and runnable.

The site is built once for the module (a real ``mkdocs build``, which runs the hook
``docs/_hooks/harness_docs.py``: it generates the references and runs the commands whose output
the pages quote). The README's blocks marked ``<!-- runnable -->`` are run command by command
in a scratch folder against the embedded reference, on free ports; its console excerpt marked
``<!-- output of: scripts/main -->`` is compared with a real run of ``scripts/main``.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}


def _hook():
    spec = importlib.util.spec_from_file_location("harness_docs",
                                                  ROOT / "docs/_hooks/harness_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=ENV)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def _text(page: Path) -> str:
    """A built page's text as a reader sees it: tags dropped, entities decoded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
                    .split())


# --------------------------------------------------------------------------------- the site


def test_site_builds_strict_with_every_page_of_the_nav(site: Path) -> None:
    for page in ("index", "getting-started", "staging", "certify", "capture", "recordings",
                 "lint-replay", "diff", "probe", "load", "contract", "reference-implementation",
                 "reference/commands", "reference/rules", "security", "benchmarks",
                 "contributing", "changelog"):
        assert (site / f"{page}.html").is_file(), page


def test_site_loads_nothing_from_the_network(site: Path) -> None:
    assert _hook().external_resources(site) == []
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in index and "<script" in index  # Material's own, local


def test_the_offline_check_finds_what_a_page_would_load(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<script src="//cdn.example/x.js"></script><a href="https://example.org/">a link</a>')
    (tmp_path / "b.css").write_text("@import url('https://cdn.example/y.css');")
    found = _hook().external_resources(tmp_path)
    assert any("fonts.googleapis.com/css" in f for f in found)
    assert any("//cdn.example/x.js" in f for f in found)
    assert any("cdn.example/y.css" in f for f in found)
    assert not any("example.org" in f for f in found)  # a link is not a load


def _commands(parser: argparse.ArgumentParser, prefix: str = "harness"
              ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _commands(sub, f"{prefix} {name}")


def test_every_long_option_of_every_command_is_in_the_command_reference(site: Path) -> None:
    page = (site / "reference/commands.html").read_text(encoding="utf-8")
    sections = {m.group(1): m.start() for m in re.finditer(r'<h\d id="(harness-[\w-]+)"', page)}
    commands = list(_commands(build_parser()))
    assert len(commands) >= 11
    missing = []
    for name, parser in commands:
        anchor = name.replace(" ", "-")
        assert anchor in sections, f"no section for {name}"
        start = sections[anchor]
        end = min((s for s in sections.values() if s > start), default=len(page))
        text = html.unescape(re.sub(r"<[^>]+>", "", page[start:end]))
        missing += [f"{name} {option}" for action in parser._actions
                    for option in action.option_strings
                    if option.startswith("--") and option not in text]
    assert not missing, f"options missing from the command reference: {missing}"


def test_every_rule_of_every_catalogue_is_on_the_rules_page(site: Path) -> None:
    from harness.diff.engine import TITLES as DIFF
    from harness.judge import rules, wsdl_rules
    from harness.judge.sending import RULE_TITLES
    from harness.probe.checks import RULE_IDS
    from harness.replay.engine import REPLAY_RULES

    page = (site / "reference/rules.html").read_text(encoding="utf-8")
    text = _text(site / "reference/rules.html")
    from harness.shadow.worker import COMPARED_RULE

    ids = [*rules.titles(), *(r.id for r in wsdl_rules.CATALOGUE), *RULE_TITLES, *REPLAY_RULES,
           *DIFF, *RULE_IDS, COMPARED_RULE]
    assert not [rule for rule in ids if rule not in text]
    # each with an example of a failure the rule's own check gave at build time
    assert not [rule for rule in ids if f'id="example-{rule}"' not in page]
    assert "[R1-SOAPACTION] AuthCode x SOAP 1.1: expected \"http://tempuri.org/AuthCode\", " \
           "actual http://tempuri.org/AuthCode" in text
    assert re.search(r"\[ROB-REJECT\] LogoutFromSchool x HTTP GET: expected refused", text)
    for rule in rules.CATALOGUE:  # clause and level per profile, as --list-rules prints them
        assert re.search(rf"{re.escape(rule.id)} {re.escape(rule.clause)} {rule.side}"
                         rf" (failure|warning)", text), rule.id


def test_every_clause_a_rule_cites_links_to_the_school_mobile_contract_page(site: Path) -> None:
    """Issue 34: findings cited clauses of a page the repository did not have. Each clause cell
    of the rules table links to its section of the School Mobile contract page, which holds
    every operation, endpoint and parameter of the shipped contract."""
    from harness.contract.model import school_mobile
    from harness.judge import odd_requests, rules, wsdl_rules

    contract_page = _beside("contract_page")
    rules_page = (site / "reference/rules.html").read_text(encoding="utf-8")
    page = (site / "reference/school-mobile.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'href="school-mobile\.html#([\w-]+)"', rules_page))
    assert not [target for target in linked if f'id="{target}"' not in page]
    clauses = {r.clause for r in (*rules.CATALOGUE, *wsdl_rules.CATALOGUE,
                                  *odd_requests.CATALOGUE)}
    cited = {clause for text in clauses for clause in contract_page.cited(text)}
    assert {"4.1 rule 5", "4.10", "4.1 table", "9.2"} <= cited
    assert not [c for c in cited if contract_page.anchor(c) not in linked]
    text = _text(site / "reference/school-mobile.html")
    for op in school_mobile().operations:
        assert op.name in text and op.endpoint in text
        assert not [p.name for p in op.parameters if p.name not in text]
    with pytest.raises(ValueError, match=r"'4\.11' .* is not on the School Mobile contract page"):
        contract_page.cited("4.11")


def _beside(name: str):
    """A module of docs/_hooks (loaded by path, as MkDocs loads the hooks)."""
    import importlib
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "docs/_hooks"))
    try:
        return importlib.import_module(name)
    finally:
        _sys.path.pop(0)


def _examples():
    return _beside("rule_examples")


def test_an_example_that_no_longer_fails_its_rule_fails_the_build() -> None:
    examples = _examples()
    passing = examples.Example("a well-formed call", lambda: examples.judged(
        examples.call("AuthCode", examples.Binding.SOAP11)))
    with pytest.raises(examples.NoExample, match="does not fail it any more"):
        examples.finding_for("R1-SOAPACTION", passing)
    with pytest.raises(examples.NoExample, match="no example for NEW-RULE"):
        examples.examples_of(["R1-SOAPACTION", "NEW-RULE"], examples.CATALOGUE)


def test_readme_failure_example_is_the_rule_s_own() -> None:
    """The README's example of a failure is what the rule's check gives on the rules page."""
    [quoted] = _excerpt(README.read_text(encoding="utf-8"),
                        "the R5-ENVELOPE example of docs/reference/rules.md")
    examples = _examples()
    [(_, _, made)] = examples.examples_of(["R5-ENVELOPE"], examples.CATALOGUE)
    assert quoted == made


def test_quoted_output_is_made_when_the_site_is_built(site: Path) -> None:
    """The pages quote certify's and lint's output from a run at build time, not by hand."""
    text = _text(site / "getting-started.html")
    assert re.search(r"certify: PASSED - \d+ checks over \d+ calls in \d+ scenarios: \d+ "
                     r"passed, 0 failed, \d+ warnings", text)
    assert re.search(r"\d+ scenarios and \d+ calls in this build", text)
    assert "{{" not in text and "run:" not in text
    lint = _text(site / "lint-replay.html")
    assert re.search(r"all 8 operations x SOAP 1\.2 .*\[R2-NO-SOAPACTION\]", lint)


def test_a_command_reference_section_for_a_command_with_subcommands() -> None:
    """A command added later (with options or subcommands of its own) is rendered with no
    edit of the hook."""
    parser = argparse.ArgumentParser(prog="harness mock", description="Serve a recording.\n\n"
                                     "Example:\n  harness mock day.jsonl --port 8000")
    parser.add_argument("--port", type=int, default=8000, help="port (default %(default)s)")
    sub = parser.add_subparsers(dest="what")
    sub.add_parser("check", help="check a recording").add_argument("--strict-order",
                                                                    action="store_true")
    text = "\n".join(_hook()._command_section("harness mock", parser, "Serve a recording."))
    assert "| `--port PORT` | `8000` | port (default 8000) |" in text
    assert "harness mock day.jsonl --port 8000" in text
    assert "`harness mock check`" in text and "`--strict-order`" in text


# ----------------------------------------------------------------------------------- README


def test_readme_is_at_most_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move text into docs/"


def test_readme_holds_the_two_commands_exactly_as_they_are() -> None:
    text = README.read_text(encoding="utf-8")
    assert "scripts/main     # set up .venv on first run, then certify the embedded " \
           "reference implementation\n" in text
    assert "scripts/test     # set up .venv on first run, then run the harness's own " \
           "tests\n" in text
    for script in ("main", "test"):
        assert os.access(ROOT / "scripts" / script, os.X_OK)


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    assert not [t for t in targets if not (ROOT / t).exists()]


def test_the_home_page_names_every_command() -> None:
    """A newcomer's map: each command of ``harness --help`` has its row on the home page."""
    from harness.cli import COMMANDS

    home = (ROOT / "docs/index.md").read_text(encoding="utf-8")
    assert not [c for c in COMMANDS if f"`harness {c}`" not in home]


def test_the_exit_status_is_said_once_with_the_signals() -> None:
    """The command reference says the exit status once (the parser's description), with
    130 and 143 as ``harness --help`` does."""
    hook = _hook()
    page = (ROOT / "docs/reference/commands.md").read_text(encoding="utf-8")
    text = page + hook.commands_reference()
    assert text.count("Exit status") == 1
    assert "130" in build_parser().description and "143" in build_parser().description


def test_rule_titles_reach_the_rules_page_without_a_backslash() -> None:
    """Markdown has no backslash escape for ``<``: ``\\<Operation>`` showed as is."""
    table = _hook()._catalogue()
    assert "&lt;Operation&gt;" in table and "\\<" not in table and "\\&lt;" not in table


def _excerpt(text: str, marker: str) -> list[str]:
    found = re.search(rf"<!-- output of: {re.escape(marker)} -->\n```\w*\n(.*?)```", text, re.S)
    assert found, f"no excerpt marked 'output of: {marker}'"
    return found.group(1).splitlines()


def _normal(line: str) -> str:
    """Ports and the report folder vary from run to run."""
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.rstrip())


def test_readme_certify_excerpt_is_what_scripts_main_prints(tmp_path: Path) -> None:
    """Each line of the excerpt (but the prompt and the '...' of lines left out) is a line of a
    real run of scripts/main, in the same order: a figure that drifts fails here."""
    excerpt = [_normal(line) for line in _excerpt(README.read_text(encoding="utf-8"),
                                                  "scripts/main")
               if not line.startswith("$ ") and line.strip() != "..."]
    done = subprocess.run([str(ROOT / "scripts/main"), "--no-html", "--report-dir",
                           str(tmp_path / "reports")], capture_output=True, text=True,
                          timeout=600, env=ENV, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    output = [_normal(line.replace(str(tmp_path / "reports"), "reports"))
              for line in (done.stdout + done.stderr).splitlines()]
    position = 0
    for line in excerpt:
        try:
            position = output.index(line, position) + 1
        except ValueError:
            pytest.fail(f"README excerpt line not in scripts/main's output (in this order):\n"
                        f"  {line}\nthe run printed:\n" + "\n".join(output))


# ------------------------------------------------------------------- README's runnable blocks


def _runnable_blocks(text: str) -> list[str]:
    return re.findall(r"<!-- runnable -->\n```(?:sh|bash)\n(.*?)```", text, re.S)


def _on_free_ports(block: str) -> str:
    """``block`` with the README's ports (``127.0.0.1:8000``, ``--port 8000``) moved to free
    ones, the same port for the same number."""
    ports: dict[str, int] = {}

    def moved(match: re.Match[str]) -> str:
        return f"{match[1]}{ports.setdefault(match[2], _free_port())}"
    return re.sub(r"(127\.0\.0\.1:|--port )(\d{4,5})\b", moved, block)


def _expected_statuses(block: str) -> list[int]:
    """The exit status of each logical line (continuations joined, blank lines dropped): N
    where its comment says 'exits N', else 0."""
    lines = re.sub(r"\\\n", " ", block).splitlines()
    return [int(m[1]) if (m := re.search(r"  #.*exits (\d+)", line)) else 0
            for line in lines if line.partition("  #")[0].strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_processes(sid: int) -> list[str]:
    """The processes of session ``sid`` still alive (pid and command line)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                found.append(f"{stat.parent.name} {cmdline.decode(errors='replace')}")
        except (OSError, ValueError, IndexError):
            continue
    return found


def _pasted_into_an_interactive_shell(block: str, folder: Path, timeout: float = 900
                                      ) -> tuple[list[int], str, list[str]]:
    """Type ``block`` into a fresh ``bash -i`` on a terminal of its own, all at once as a
    paste without bracketing (each line runs while the rest waits in the terminal's input,
    where a command that reads its standard input would eat it), then ``exit``. Returns the
    status of each command (PROMPT_COMMAND writes them), what the terminal showed, and the
    processes of the shell's session left running 30 s after it exited."""
    import pty
    import threading

    statuses = folder / "statuses"
    env = {"HOME": str(folder), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TERM": "xterm", "LANG": os.environ.get("LANG", "C.UTF-8"), "NO_COLOR": "1",
           "PS1": "$ ", "PROMPT_COMMAND": f"echo $? >> {statuses}"}
    pid, master = pty.fork()
    if pid == 0:  # the child: a session of its own, the terminal its controlling one
        os.chdir(folder)
        os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], env)
    shown = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed
                return
            if not data:
                return
            shown.extend(data)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        time.sleep(0.5)  # the first prompt
        os.write(master, (block + "exit\n").encode())
        deadline = time.monotonic() + timeout
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the tour did not end within {timeout:g} s:\n"
                            + shown.decode(errors="replace")[-3000:])
            time.sleep(0.5)
        reader.join(timeout=5)
        left = _session_processes(pid)
        for _ in range(60):
            if not left:
                break
            time.sleep(0.5)
            left = _session_processes(pid)
        done = [int(s) for s in statuses.read_text().split()][1:]  # before the first prompt
        return done, shown.decode(errors="replace"), left
    finally:
        for line in _session_processes(pid):  # never left behind by the test itself
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
        os.close(master)


def test_readme_tour_pasted_into_a_fresh_interactive_shell(tmp_path: Path) -> None:
    """The five-minute tour as a newcomer runs it in a clone: pasted as one block into a
    fresh interactive bash (job numbers, background jobs and their startup as a real shell
    has them), on free ports. Every command exits as the README says, and no process of the
    shell's session is left behind (``kill %1 %3`` once missed the second server)."""
    blocks = _runnable_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no block marked <!-- runnable -->"
    for name in (".venv", "recordings"):
        (tmp_path / name).symlink_to(ROOT / name)
    block = _on_free_ports("\n".join(blocks))
    statuses, shown, left = _pasted_into_an_interactive_shell(block, tmp_path)
    assert statuses == _expected_statuses(block), shown[-4000:]
    assert not left, f"left running after the tour: {left}"
    assert (tmp_path / "traffic.jsonl").stat().st_size > 0


def test_the_tour_of_the_site_is_the_readme_s() -> None:
    """The tour is written twice (README and Getting started): the same block, not two."""
    site = _runnable_blocks((ROOT / "docs/getting-started.md").read_text(encoding="utf-8"))
    assert site and site == _runnable_blocks(README.read_text(encoding="utf-8"))


def test_a_runnable_block_is_read_as_a_newcomer_types_it() -> None:
    block = _on_free_ports("harness serve --port 8000 &   # serve\n"
                           "harness lint x.jsonl \\\n    --quiet   # exits 1: zeep\n\n"
                           "curl 'http://127.0.0.1:8000/A.asmx?x=1'\n")
    port = re.search(r"--port (\d+)", block)[1]
    assert port != "8000" and f"http://127.0.0.1:{port}/A.asmx" in block
    assert _expected_statuses(block) == [0, 1, 0]
