"""The layers import downwards only: traffic/ (transport, recordings) never imports judge/."""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"


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


def test_traffic_never_imports_the_judges() -> None:
    upward = {f"{path.relative_to(HARNESS.parent)}: {name}"
              for path in sorted((HARNESS / "traffic").glob("*.py"))
              for name in _imports(path)
              if name.split(".")[:2] in (["harness", "judge"], ["harness", "replay"])}
    assert not upward, sorted(upward)
