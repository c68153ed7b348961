"""Any ASMX service: a second service (tests/services/inventory) served by the reference from its
contract and by the real runtime, certified; its WSDL checked against a saved contract, and
drift (an operation renamed, a parameter reordered or retyped, a result type changed, a binding
disabled) failing by name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from asmx_runtime import real_runtime
from traffic import offered_calls, record_calls

from harness.certify.engine import FEATURE_FILES, FEATURES
from harness.certify.generate import write_features
from harness.contract import model
from harness.contract.model import Contract, ParamType, school_mobile
from harness.reference.server import running
from harness.traffic.wsdls import import_wsdls

INVENTORY = Path(__file__).parent / "services" / "inventory"
SAVED = INVENTORY / "contract.json"


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def inventory() -> Contract:
    return model.load(SAVED)


def certify(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "certify.json"
    done = harness("certify", "--no-html", "--json", str(out), "--report-dir",
                   str(tmp_path / "reports"), *args, cwd=tmp_path)
    data = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, data, done.stdout + done.stderr


def failed_rules(data: dict) -> set[str]:
    return {f["rule"] for f in data.get("failures", data.get("findings", []))
            if f.get("verdict") == "failed"}


# ------------------------------------------------------------------ features from the contract


def test_school_mobile_features_are_the_shipped_ones(tmp_path: Path) -> None:
    written = write_features(school_mobile(), FEATURES, FEATURE_FILES, tmp_path)
    assert "results.feature" not in written
    for name in written:
        assert (tmp_path / name).read_text() == (FEATURES / name).read_text(), name


def test_inventory_features_name_its_operations_and_types(inventory: Contract,
                                                          tmp_path: Path) -> None:
    written = write_features(inventory, FEATURES, FEATURE_FILES, tmp_path)
    assert "get_token_device.feature" not in written and "results.feature" in written
    soap = (tmp_path / "soap11.feature").read_text()
    assert "| Restock " in soap and "@R9-GUID" in soap and "(R9-DATETIME)" in soap
    http_get = (tmp_path / "http_get.feature").read_text()
    assert "Restock" not in http_get  # ASMX leaves a Guid parameter out of HttpGet
    assert "| /Catalog.asmx |" in (tmp_path / "wsdl.feature").read_text()


# ------------------------------------------------------------------ the reference serves it


def test_reference_serves_inventory_and_certify_passes(tmp_path: Path) -> None:
    code, data, out = certify(tmp_path, "--contract", str(SAVED))
    assert code == 0, out
    assert data["counts"]["failed"] == 0
    assert {"R9-GUID", "R9-ENUM", "WSDL-TYPES", "OP-RESULT"} <= set(data["rules"]), data["rules"]
    assert (tmp_path / "reports" / "features" / "results.feature").is_file()


def test_diff_classifies_and_judges_by_the_contract(inventory: Contract, tmp_path: Path) -> None:
    """diff generates each operation x binding the contract offers (Restock, which takes a
    Guid, not over GET/POST) and two references of the same contract agree."""
    out = tmp_path / "diff.json"
    with running(inventory) as primary, running(inventory) as candidate:
        done = harness("diff", "--primary", primary, "--candidate", candidate, "--contract",
                       str(SAVED), "--json", str(out), "--allure-dir", "")
    assert done.returncode == 0, done.stdout + done.stderr
    offered = sum(len(inventory.bindings_of(op)) for op in inventory.operations)
    # and each endpoint's WSDL, compared as a contract: a service description, not a call
    data = json.loads(out.read_text())
    assert data["exchanges"] == 3 * offered == 3 * 26
    assert data["service_descriptions"] == {"WSDL": len(inventory.endpoints)} == {"WSDL": 2}
    assert "WARNINGS" not in done.stdout


def _swap(contract: Contract, operation: str, **changes) -> Contract:
    ops = tuple(replace(op, **changes) if op.name == operation else op
                for op in contract.operations)
    return replace(contract, operations=ops)


def drifted(contract: Contract, kind: str) -> Contract:
    """The saved contract changed the way a deployment may drift from it."""
    price = contract.operation("PriceOf")
    if kind == "renamed":
        return _swap(contract, "CountItems", name="CountAllItems")
    if kind == "reordered":
        return _swap(contract, "PriceOf", parameters=(price.parameters[1], price.parameters[0],
                                                       price.parameters[2]))
    if kind == "retyped":
        flag = replace(contract.operation("CountItems").parameters[1], type=ParamType.INT)
        return _swap(contract, "CountItems", parameters=(
            contract.operation("CountItems").parameters[0], flag))
    if kind == "result":
        return _swap(contract, "PriceOf", result="double")
    assert kind == "no-httpget"
    return replace(contract, bindings=("soap11", "soap12", "post"))


#: Drift -> (the WSDL rule that names it, words of the line that says what drifted).
DRIFTS = {
    "renamed": ("WSDL-OPERATIONS", "renamed to CountAllItems?"),
    "reordered": ("WSDL-PARAMETERS", "expected sku > quantity > discount, "
                  "actual quantity > sku > discount"),
    "retyped": ("WSDL-TYPES", "expected includeReserved: boolean, actual includeReserved: int"),
    "result": ("WSDL-RESULT", "expected decimal, actual double"),
    "no-httpget": ("WSDL-BINDINGS", "HttpGet: expected a HttpGet binding and port"),
}


def assert_drift_named(done: subprocess.CompletedProcess[str], kind: str) -> None:
    """``contract --check`` failed, naming the drift of ``kind`` by its rule and words."""
    rule, words = DRIFTS[kind]
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(line.startswith(f"[{rule}]") and words in line
               for line in done.stdout.splitlines()), done.stdout


@pytest.mark.parametrize("kind", DRIFTS)
def test_drift_from_the_saved_contract_fails_naming_it(inventory: Contract, kind: str) -> None:
    with running(drifted(inventory, kind)) as url:
        done = harness("contract", "--check", str(SAVED), "--target", url)
    assert_drift_named(done, kind)


def test_certify_fails_a_drifted_deployment_by_its_wsdl(inventory: Contract,
                                                         tmp_path: Path) -> None:
    with running(drifted(inventory, "retyped")) as url:
        code, data, out = certify(tmp_path, "--contract", str(SAVED), "--target", url)
    assert code == 1, out
    assert "WSDL-TYPES" in failed_rules(data), out


# ------------------------------------------------------------------ the real runtime


#: Drift -> (file, text of the saved service, its drifted text): the same drifts as .asmx and
#: web.config, for the real runtime.
SOURCE_DRIFTS = {
    "renamed": ("Stock.asmx", "public int CountItems(", "public int CountAllItems("),
    "reordered": ("Stock.asmx", "PriceOf(string sku, long quantity,",
                  "PriceOf(long quantity, string sku,"),
    "retyped": ("Stock.asmx", "CountItems(string sku, bool includeReserved)",
                "CountItems(string sku, int includeReserved)"),
    "result": ("Stock.asmx", "public decimal PriceOf(", "public double PriceOf("),
    # Removed, not just left out: the machine-wide configuration may enable it.
    "no-httpget": ("web.config", '<add name="HttpGet" />', '<remove name="HttpGet" />'),
}


def drifted_service(kind: str, folder: Path) -> Path:
    shutil.copytree(INVENTORY, folder)
    name, old, new = SOURCE_DRIFTS[kind]
    text = (folder / name).read_text()
    assert old in text
    text = text.replace(old, new)
    if kind == "retyped":
        text = text.replace("(includeReserved ? 1 : 0)", "includeReserved")
    if kind == "result":
        text = text.replace("return quantity * 2.5m - discount;",
                            "return (double)(quantity * 2.5m - discount);")
    (folder / name).write_text(text)
    return folder


@pytest.mark.interop
def test_real_runtime_serves_inventory_contract_derived_and_certified(
        asmx_home: Path, inventory: Contract, tmp_path: Path) -> None:
    with real_runtime(asmx_home, INVENTORY, tmp_path / "work") as url:
        derived = tmp_path / "derived.json"
        done = harness("contract", "--wsdl", f"{url}/Stock.asmx", "--wsdl",
                       f"{url}/Catalog.asmx", "--name", "Inventory", "-o", str(derived))
        assert done.returncode == 0, done.stderr
        assert model.load(derived) == inventory
        assert import_wsdls([f"{url}/Stock.asmx", f"{url}/Catalog.asmx"], "Inventory") \
            == inventory
        code, data, out = certify(tmp_path, "--contract", str(derived), "--target", url)
    assert code == 0, out
    assert data["counts"]["failed"] == 0


@pytest.mark.interop
@pytest.mark.parametrize("kind", SOURCE_DRIFTS)
def test_real_runtime_drift_fails_naming_it(asmx_home: Path, kind: str, tmp_path: Path) -> None:
    service = drifted_service(kind, tmp_path / "service")
    with real_runtime(asmx_home, service, tmp_path / "work") as url:
        done = harness("contract", "--check", str(SAVED), "--target", url)
    assert_drift_named(done, kind)


def test_lint_and_replay_classify_and_judge_by_the_contract(inventory: Contract,
                                                            tmp_path: Path) -> None:
    """A recording of the inventory service: judged by its contract it is clean but for the
    one bad guid (R9-GUID); by the default School Mobile contract nothing classifies."""
    from harness.contract.bindings import Binding
    from harness.contract.model import sample_arguments

    recording = tmp_path / "inventory.jsonl"
    restock = inventory.operation("Restock")
    calls = [*offered_calls(inventory), (restock, Binding.SOAP11,
                                         sample_arguments(restock, 0) | {"batch": "not-a-guid"})]
    with running(inventory) as url:
        record_calls(inventory, url, recording, calls)
        replayed = harness("replay", str(recording), "--target", url, "--contract", str(SAVED),
                           "--json", str(tmp_path / "replay.json"), "--quiet")
    linted = harness("lint", str(recording), "--contract", str(SAVED), "--json",
                     str(tmp_path / "lint.json"), "--quiet")
    assert linted.returncode == 1, linted.stdout + linted.stderr
    lint = json.loads((tmp_path / "lint.json").read_text())
    assert {(f["rule"], f["operation"]) for f in lint["findings"]
            if f["verdict"] == "failed"} == {("R9-GUID", "Restock")}
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "UNCLASSIFIED" not in (tmp_path / "replay.json").read_text()
    default = harness("lint", str(recording), "--json", str(tmp_path / "sm.json"), "--quiet")
    assert default.returncode == 1
    assert {f["rule"] for f in json.loads((tmp_path / "sm.json").read_text())["findings"]} \
        == {"UNCLASSIFIED"}


# ------------------------------------------------------------- WSDL publication is optional


def _documentation_off(contract: Contract, request):
    """The reference with ASP.NET's Documentation protocol removed: ?WSDL and the help page
    answer 500 with an HTML error page, as hardened ASP.NET does (customErrors On)."""
    from harness.reference.app import answer
    from harness.traffic.exchange import HttpResponse

    if request.method == "GET" and (request.url.lower().endswith(".asmx")
                                    or request.url.lower().endswith("?wsdl")):
        page = b"<html><head><title>Runtime Error</title></head><body>...</body></html>"
        return HttpResponse(500, (("Content-Type", "text/html"),), page)
    return answer(contract, request)


def _wrong_soapaction(contract: Contract, request):
    """The reference, its WSDL's SOAP bindings naming another soapAction (as a team's
    hand-written WSDL may), the calls themselves right."""
    from harness.reference.app import answer
    from harness.traffic.exchange import HttpResponse

    response = answer(contract, request)
    if request.url.lower().endswith("?wsdl"):
        body = response.body.replace(b'soapAction="http://tempuri.org/',
                                     b'soapAction="urn:school#')
        return HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),), body)
    return response


def test_no_wsdl_published_is_one_warning_per_endpoint(tmp_path: Path) -> None:
    """Documentation off (no ?WSDL, no help page): one WSDL-PUBLISHED warning per endpoint,
    the other WSDL checks not applicable, exit 0; --require-wsdl (or the severity override
    in the config file) makes it a failure."""
    from harness.reference.app import create_app

    contract = school_mobile()
    with running(app=create_app(contract, respond=_documentation_off)) as url:
        code, data, out = certify(tmp_path, "--target", url)
        assert code == 0, out
        warned = [f for f in data["findings"] if f["rule"] == "WSDL-PUBLISHED"]
        assert len(warned) == len(contract.endpoints) == 7
        assert all(f["verdict"] == "warning" and f["actual"] == "HTTP 500, text/html"
                   and "Documentation protocol off?" in f["message"] for f in warned)
        for rule in ("WSDL-DOCUMENT", "WSDL-OPERATIONS", "WSDL-SOAPACTION", "WSDL-ADDRESS"):
            assert data["rules"][rule] == {"not applicable": 7}, rule
        assert "certify: PASSED" in out
        code, data, out = certify(tmp_path, "--target", url, "--require-wsdl")
        assert code == 1 and data["rules"]["WSDL-PUBLISHED"] == {"failed": 7}, out
        (tmp_path / "harness.toml").write_text('[severity]\nWSDL-PUBLISHED = "failure"\n')
        code, data, out = certify(tmp_path, "--target", url)
        assert code == 1 and data["rules"]["WSDL-PUBLISHED"] == {"failed": 7}, out


def test_a_published_wsdl_is_judged_for_the_bindings_certified(tmp_path: Path) -> None:
    """--binding soap11 --binding soap12 still checks the WSDL's SOAP bindings: a wrong
    soapAction fails WSDL-SOAPACTION, and only it (the HTTP bindings are not judged)."""
    from harness.reference.app import create_app

    contract = school_mobile()
    with running(app=create_app(contract, respond=_wrong_soapaction)) as url:
        code, data, out = certify(tmp_path, "--target", url, "--binding", "soap11",
                                  "--binding", "soap12", "--junit", "certify.xml")
    assert code == 1, out
    # a partial run says so: console, JSON, JUnit and the Allure overview
    assert "certify: FAILED for SOAP 1.1, SOAP 1.2; HTTP GET, HTTP POST not certified - " in out
    assert data["selection"] == {"covered": ["SOAP 1.1", "SOAP 1.2"],
                                 "left_out": ["HTTP GET", "HTTP POST"],
                                 "chosen": "--binding soap11 --binding soap12", "partial": True}
    junit = (tmp_path / "certify.xml").read_text(encoding="utf-8")
    assert '<property name="selection.left_out" value="HTTP GET, HTTP POST"/>' in junit
    overview = (tmp_path / "reports" / "allure-results" / "environment.properties").read_text()
    assert "not.judged = HTTP GET, HTTP POST" in overview
    assert failed_rules(data) == {"WSDL-SOAPACTION"}
    failed = [f for f in data["findings"] if f["verdict"] == "failed"]
    assert len(failed) == 2 * len(contract.operations)  # each operation, in soap and soap12
    assert {f["binding"] for f in failed} == {"soap", "soap12"}
    assert data["rules"]["WSDL-PUBLISHED"] == {"passed": 7}
    # the HTTP bindings of the WSDL are not judged: 8 operations and 7 addresses x 2 bindings
    assert data["rules"]["WSDL-BINDINGS"] == {"passed": 16}
    assert data["rules"]["WSDL-ADDRESS"] == {"passed": 14}
