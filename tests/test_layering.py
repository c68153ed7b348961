"""The layers import downwards only, so each folder has one direction:

- the HTTP types (``harness.http_messages``) at the ground, below contract/ and traffic/;
- contract/ (the service's description) below traffic/ (transport, recordings, redaction);
- judge/ (findings as plain data) below reports/ (which renders them);
- reports/ below the commands' engines (certify/, replay/, diff/...), which run and render.

Imports inside functions and under ``TYPE_CHECKING`` count: a cycle hidden in a function is
still a cycle a reader has to hold in their head.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"
#: The folders (and top-level modules) that run a command: nothing below them imports them.
ENGINES = ("certify", "call", "commands", "replay", "diff", "load", "probe", "mock", "capture",
           "cli")


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _room(name: str) -> str | None:
    """The folder (or top-level module) of harness an imported name lives in."""
    parts = name.split(".")
    if parts[0] != "harness" or len(parts) < 2:
        return None
    room = parts[1]
    return room if (HARNESS / room).is_dir() or (HARNESS / f"{room}.py").exists() else None


def _edges(room: str) -> Iterator[tuple[str, str]]:
    """(file, imported room) for every import of another room by ``room``'s files."""
    for path in sorted((HARNESS / room).rglob("*.py")):
        for name in _imports(path):
            other = _room(name)
            if other is not None and other != room:
                yield f"{path.relative_to(HARNESS.parent)}: {name}", other


def _upward(room: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted({where for where, other in _edges(room) if other in forbidden})


def test_traffic_never_imports_the_judges() -> None:
    assert not _upward("traffic", ("judge", "replay", "reports", *ENGINES))


def test_contract_stands_on_the_http_types_not_on_traffic() -> None:
    """bindings build HttpRequests and read HttpResponses: those types are at the ground, so
    the contract never imports the transport that imports it (redaction reads the contract)."""
    assert not _upward("contract", ("traffic", "judge", "reports", *ENGINES))
    used = {name for path in (HARNESS / "contract").rglob("*.py") for name in _imports(path)}
    assert "harness.http_messages.HttpRequest" in used


def test_http_types_are_at_the_ground() -> None:
    ground = {_room(name) for name in _imports(HARNESS / "http_messages.py")} - {None}
    assert ground <= {"frozen"}, ground


def test_findings_are_plain_data_rendered_by_reports() -> None:
    """judge/ holds findings and the Report as data; reports/ renders them (console, JSON,
    JUnit, Allure) and imports judge/, never the reverse."""
    assert not _upward("judge", ("reports", "scenarios", *ENGINES))
    assert any(other == "judge" for _, other in _edges("reports"))


def test_reports_never_import_the_engines_they_render_for() -> None:
    assert not _upward("reports", ENGINES)


def test_no_two_rooms_import_each_other() -> None:
    """The rooms of harness form no cycle, of any length (none reaches itself)."""
    rooms = sorted(p.name if p.is_dir() else p.stem for p in HARNESS.iterdir()
                   if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py")
    graph = {room: {other for _, other in _edges(room)} if (HARNESS / room).is_dir()
             else {_room(n) for n in _imports(HARNESS / f"{room}.py")} - {None, room}
             for room in rooms if room != "__init__"}

    def reach(room: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(room, ()))
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo += graph.get(other, ())
        return seen

    reached = {room: reach(room) for room in graph}
    tangled = {" <-> ".join(sorted({room} | {o for o in reached[room] if room in reached[o]}))
               for room in graph if room in reached[room]}
    assert not tangled, sorted(tangled)
