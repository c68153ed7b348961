"""One offline HTML file from Allure results, rendered by Allure 3 (npm, ``tools/``).

Allure embeds a Google Analytics script in its report, which calls out as soon as the report is
opened online. Certify reports carry staging traffic, so ``render`` strips every script that
loads from the network or talks to an analytics service, and ``external_scripts`` checks that
none is left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import lifeline
from harness.errors import HarnessError, UsageError

#: A clone's copy (scripts/setup installs it there); an installed harness uses one on the PATH.
ROOT = Path(__file__).resolve().parents[2]
ALLURE = ROOT / "tools" / "node_modules" / ".bin" / "allure"
#: Marks of analytics code in an inline script.
_ANALYTICS = re.compile(r"gtag\(|dataLayer|googletagmanager|google-analytics|\bga\(", re.I)
_SCRIPT_OPEN = re.compile(r"<script\b[^>]*>", re.I)
_EXTERNAL_SRC = re.compile(r"""\bsrc\s*=\s*["']?\s*(?:https?:)?//""", re.I)
#: Where _EXTERNAL_SRC can start (what "src" matches, ignoring case: U+017F is a long s). Found
#: first, so its slow search is not run over every byte of a tag holding a 3.6 MB data: URL.
_SRC_START = re.compile("[sS\u017f][rR][cC]")


#: The tag of a test that passed with warnings (``allure_results`` tags it; CATEGORIES below
#: matches it). Here, not there: certify starts the renderer before it imports the rest.
WARNING_TAG = "warning"
#: The report's categories (its Categories tab and the tree's Categories filter), first match
#: wins: the tests that passed with warnings (tagged WARNING_TAG) apart from the failures.
CATEGORIES = [
    {"name": "Warnings (permitted deviations: the run passes)",
     "matchers": {"statuses": ["passed"], "labels": {"tag": f"^{WARNING_TAG}$"}}},
    {"name": "Failures", "matchers": {"statuses": ["failed"]}},
    {"name": "Not judged (errors of the run)", "matchers": {"statuses": ["broken"]}},
]


class AllureMissing(HarnessError):
    """Allure 3 is not installed (scripts/setup installs it with npm)."""


def allure_command() -> Path:
    if shutil.which("node") is None:
        raise AllureMissing("Node.js is not installed; install Node 20+ and then Allure 3 "
                            "(`npm install -g allure`, or scripts/setup in a clone)")
    if ALLURE.exists():
        return ALLURE
    on_path = shutil.which("allure")
    if on_path is None:
        raise AllureMissing("Allure 3 is not installed (`npm install -g allure`, or "
                            "scripts/setup in a clone installs it into tools/)")
    return Path(on_path)


#: Runs an Allure history file keeps (the oldest go first): a nightly job's file stays small.
HISTORY_LIMIT = 100
#: The history file's name in a folder given as the history (a previous run's report folder).
HISTORY_FILE = "allure-history.jsonl"


def history_file(path: str | Path) -> Path:
    """The Allure history file ``path`` names: a JSON Lines file, or a folder holding one
    (HISTORY_FILE, e.g. the --report-dir of the previous run)."""
    path = Path(path)
    return path / HISTORY_FILE if path.is_dir() or not path.suffix else path


def render(results: str | Path, out_dir: str | Path, *, name: str = "harness",
           history: str | Path | None = None) -> Path:
    """Render ``results`` into ``out_dir``/index.html (one file, offline); its path. With
    ``history`` (``history_file``), Allure's own history: the report shows the runs the file
    holds (trend charts, each test's history) and this run is appended to it."""
    with Renderer() as renderer:
        return renderer.render(results, out_dir, name=name, history=history)


#: Allure 3's awesome command without the rest of its CLI, in a process that loads Allure's
#: modules before it is given the results (``Renderer``).
RENDERER = Path(__file__).with_name("allure_render.mjs")
#: allure_render.mjs's exit status when it cannot load this Allure's modules.
_NOT_LOADED = 3


class Renderer:
    """Allure 3's renderer, started ahead of the results it renders: Node and Allure's modules
    load (most of a render's start-up) while the run that writes the results goes on, on the
    other core; ``render`` (or ``start``, then ``finish``) hands it the results. An Allure
    whose modules it cannot load is run through its CLI (``allure awesome``), as before.
    ``close`` ends it unused."""

    def __init__(self) -> None:
        self._work = tempfile.TemporaryDirectory(prefix="harness-allurerc-")
        self._process: subprocess.Popen[str] | None = None
        self._command: Path | None = None
        self._job: tuple[Path, Path, str, dict[str, str], Path] | None = None
        #: where Allure writes the page: a hidden folder, whose page takes
        #: the place of the report's once it is complete and checked (``_publish``)
        self._staging: Path | None = None
        self._refused: UsageError | None = None
        try:
            self._command = allure_command()
            self._process = subprocess.Popen(
                ["node", str(RENDERER), str(self._command.resolve())], cwd=self._work.name,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, preexec_fn=lifeline.child_killed_with_us())
        except (AllureMissing, OSError):  # said by render, when it is asked for
            self._process = None

    def render(self, results: str | Path, out_dir: str | Path, *, name: str = "harness",
               history: str | Path | None = None) -> Path:
        """As ``render`` (the module's function) does."""
        self.start(results, out_dir, name=name, history=history)
        return self.finish()

    def start(self, results: str | Path, out_dir: str | Path, *, name: str = "harness",
              history: str | Path | None = None) -> None:
        """Hand the renderer its job and return at once: it renders while the caller does
        other work (certify: stop the reference, write the console, JSON and JUnit reports);
        ``finish`` waits for the page. Whatever is refused is raised by ``finish``."""
        self._job = None
        try:
            self._job = self._prepare(results, out_dir, name, history)
        except UsageError as exc:
            self._refused = exc
            return
        self._refused = None
        process = self._process
        if process is not None and process.stdin is not None:
            try:
                process.stdin.write(json.dumps(self._job[3]) + "\n")
                process.stdin.close()
            except OSError:  # it ended: finish says why, or runs the CLI
                pass
            process.stdin = None  # closed: communicate() must not flush it again

    def finish(self) -> Path:
        """The page of the job ``start`` handed over, once rendered and checked."""
        if self._refused is not None:
            raise self._refused
        assert self._job is not None and self._staging is not None, "finish() without start()"
        results, out_dir, name, _, config = self._job
        try:
            done = self._run(results, self._staging, name, config)
            html = self._staging / "index.html"
            if done.returncode != 0 or not html.is_file():
                detail = " ".join((done.stderr or done.stdout).split())[-300:]
                raise HarnessError(f"allure failed (exit {done.returncode}): {detail}")
            page = html.read_text(encoding="utf-8")
            stripped = strip_analytics(page)
            if stripped != page:
                html.write_text(stripped, encoding="utf-8")
                # Checked again only when something was taken out (a script inside one taken
                # out is skipped by strip_analytics): a page it left whole has no script that
                # external_scripts would find, which asks the same of each (0.06 s of 7 MB).
                left = external_scripts(stripped)
                if left:
                    raise HarnessError(
                        f"the report still loads scripts from the network: {left[0]}")
            try:
                return _publish(self._staging, out_dir) / "index.html"
            except OSError as exc:
                raise UsageError(f"cannot write the HTML report to {out_dir}: "
                                 f"{exc.strerror or exc}") from None
        finally:
            self._discard_staging()

    def _discard_staging(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def _prepare(self, results: str | Path, out_dir: str | Path, name: str,
                 history: str | Path | None) -> tuple[Path, Path, str, dict[str, str], Path]:
        """(results, out_dir, name, the renderer's job, the config file), checked."""
        # Absolute: Allure runs in a folder of its own (relative paths failed: "No test
        # results directories found").
        results, out_dir = Path(results).resolve(), Path(out_dir).resolve()
        if not results.is_dir() or not any(results.glob("*-result.json")):
            raise UsageError(f"{results} holds no Allure results (run harness certify first)")
        settings: dict[str, object] = {"name": name, "categories": CATEGORIES}
        if history is not None:
            kept = history_file(history).resolve()
            if kept.exists() and not kept.is_file():
                raise UsageError(f"--history {kept} is not a file")
            settings |= {"historyPath": str(kept), "historyLimit": HISTORY_LIMIT,
                         "appendHistory": True}
        config = Path(self._work.name) / "allurerc.json"
        config.write_text(json.dumps(settings), encoding="utf-8")
        try:  # Allure writes a hidden folder of its own (in the report folder if it is
            # there, else beside it: a render refused leaves none): a killed or refused render
            # leaves the report folder as it was (a previous run's page, or none), never half
            # a page
            where = out_dir if out_dir.is_dir() else out_dir.parent
            where.mkdir(parents=True, exist_ok=True)
            self._discard_staging()
            self._staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-rendering-",
                                                  dir=where))
        except OSError as exc:
            raise UsageError(f"cannot write the HTML report to {out_dir}: "
                             f"{exc.strerror or exc}") from None
        # The trailing separator: the folder as the CLI hands it on (a glob's match).
        job = {"results": f"{results}{os.sep}", "output": str(self._staging), "name": name,
               "config": str(config)}
        return results, out_dir, name, job, config

    def _run(self, results: Path, out_dir: Path, name: str, config: Path
             ) -> subprocess.CompletedProcess[str]:
        process = self._process
        if process is not None:
            try:
                self._process = None
                out, err = process.communicate(timeout=300)
            except (OSError, subprocess.TimeoutExpired) as exc:
                _end(process)
                raise HarnessError(f"allure did not run: {exc}") from None
            except BaseException:  # a signal cut the wait short: Node stops before the
                _end(process)  # hidden folder it writes is removed (else it could remake it)
                raise
            if process.returncode != _NOT_LOADED:
                return subprocess.CompletedProcess(process.args, process.returncode, out, err)
        if self._command is None:
            self._command = allure_command()  # AllureMissing: no Node, no Allure
        command = [str(self._command), "awesome", str(results), "--output", str(out_dir),
                   "--single-file", "--report-name", name, "--config", str(config)]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=300,
                                  check=False, cwd=self._work.name,
                                  preexec_fn=lifeline.child_killed_with_us())
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HarnessError(f"allure did not run: {exc}") from None

    def close(self) -> None:
        if self._process is not None:
            _end(self._process)
            self._process = None
        self._discard_staging()
        self._work.cleanup()

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _publish(staging: Path, out_dir: Path) -> Path:
    """Move what Allure wrote into ``staging`` (its page) into ``out_dir``, each file
    replacing its namesake at once (a rename: a reader sees the old page or the new one)."""
    out_dir.mkdir(exist_ok=True)
    for entry in staging.iterdir():
        target = out_dir / entry.name  # never staging itself: its name is hidden
        if entry.is_dir() and target.is_dir():
            shutil.rmtree(target)
        os.replace(entry, target)
    return out_dir


def _end(process: subprocess.Popen[str]) -> None:
    """Stop a renderer that was not (or not fully) used, and reap it."""
    process.kill()
    process.communicate()


def _scripts(html: str):
    """(start, end, opening tag, body) of every <script> element."""
    lowered = html.lower()
    for match in _SCRIPT_OPEN.finditer(html):
        close = lowered.find("</script>", match.end())
        end = len(html) if close < 0 else close + len("</script>")
        yield match.start(), end, match.group(0), html[match.end():max(close, match.end())]


def _loads_from_network(tag: str) -> bool:
    """_EXTERNAL_SRC.search(tag), in a few milliseconds where a data: URL makes the tag long
    (0.1 s each time for Allure's page)."""
    return any(_EXTERNAL_SRC.match(tag, at.start()) for at in _SRC_START.finditer(tag))


def strip_analytics(html: str) -> str:
    """``html`` without scripts loaded from the network and without inline analytics code."""
    pieces, last = [], 0
    for start, end, tag, body in _scripts(html):
        if start < last:
            continue
        if _loads_from_network(tag) or (len(body) < 20000 and _ANALYTICS.search(body)):
            pieces.append(html[last:start])
            last = end
    pieces.append(html[last:])
    return "".join(pieces)


def external_scripts(html: str) -> list[str]:
    """Opening tags of scripts that load from the network, and inline analytics snippets."""
    found = []
    for _, _, tag, body in _scripts(html):
        if _loads_from_network(tag):
            found.append(tag)
        elif len(body) < 20000 and _ANALYTICS.search(body):
            found.append(f"{tag}{body.strip()[:60]}...")
    return found
