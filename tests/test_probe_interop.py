"""``harness probe`` against the real ASMX runtime (the interop lane): stock ASP.NET's default
variant sends stack traces to a local client and is flagged SEC-LEAK with the evidence quoted;
the customerrors variant is not; neither expands an entity (SEC-ENTITY) nor fails any other rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from asmx_runtime import real_runtime
from test_probe import failed_rules, run_probe

pytestmark = pytest.mark.interop
BUDGET = ["--max-requests", "300", "--timeout", "20"]
LEXICAL = Path(__file__).parent / "services" / "lexical"


def test_stock_aspnet_leaks_stack_traces_to_a_local_client(asmx_url: str, tmp_path: Path
                                                          ) -> None:
    code, data, stdout = run_probe(tmp_path, "--target", asmx_url, *BUDGET)
    assert code == 1
    assert failed_rules(data) == {"SEC-LEAK"}, stdout
    leaks = [f for f in data["findings"] if f["rule"] == "SEC-LEAK" and f["verdict"] == "failed"]
    assert any("stack frame: 'at System." in f["actual"] for f in leaks)
    assert data["rules"]["SEC-ENTITY"].get("passed", 0) > 0
    assert "[SEC-LEAK]" in stdout


def test_custom_errors_leak_nothing(asmx_customerrors_url: str, tmp_path: Path) -> None:
    code, data, stdout = run_probe(tmp_path, "--target", asmx_customerrors_url, *BUDGET)
    assert code == 0, stdout
    assert failed_rules(data) == set()
    assert data["rules"]["SEC-ENTITY"].get("passed", 0) > 0
    # X-AspNet-Version is a warning, reported once
    versions = [f for f in data["findings"] if f["rule"] == "SEC-LEAK"]
    assert all(f["verdict"] == "warning" and "version" in f["actual"] for f in versions)
    assert len(versions) <= 2


def test_every_type_refused_as_asmx_refuses_it(asmx_home: Path, tmp_path: Path) -> None:
    """Generated values of every simple type over all four bindings: what probe expects ASMX
    to refuse (ROB-REJECT) is what it refuses, GET/POST forms included (an enumeration takes
    any 32-bit number there). Only the stock variant's stack traces are findings."""
    with real_runtime(asmx_home, LEXICAL, tmp_path / "work") as url:
        code, data, stdout = run_probe(tmp_path, "--target", url, "--contract",
                                       str(LEXICAL / "contract.json"), "--max-requests", "1500",
                                       "--max-time", "300", "--timeout", "20")
    assert code == 1 and failed_rules(data) == {"SEC-LEAK"}, stdout
    assert data["rules"]["ROB-REJECT"].get("passed", 0) > 50
