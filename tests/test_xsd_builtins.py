"""Every XSD built-in type imports as itself (issue 31): ``harness contract`` of a WSDL with
xs:integer, xs:long, xs:boolean, xs:dateTime parameters (and every other built-in) writes simple
types, each with XSD's lexical rule (``ParamType.lexical``) beside what ASMX reads
(``ParamType.accepts``); certify holds requests and results to the first, the reference
refuses only what ASMX refuses. tests/services/builtins is the service on the real runtime
(Builtins.wsdl: its WSDL as the runtime published it); the interop lane certifies it, and the
reference serving the contract imported from it, and pins what the runtime reads."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import httpx
import pytest
from asmx_runtime import real_runtime

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, Operation, Parameter, load
from harness.contract.types import ParamType
from harness.judge.findings import Verdict
from harness.judge.rules import judge
from harness.reference.app import answer
from harness.traffic.exchange import Exchange

BUILTINS = Path(__file__).parent / "services" / "builtins"
NAMESPACE = "http://example.org/builtins/"
#: What the WSDL of tests/services/builtins says of each Echo<Type>'s parameter.
PUBLISHED = {
    "Integer": "integer", "NonNegativeInteger": "nonNegativeInteger",
    "PositiveInteger": "positiveInteger", "NonPositiveInteger": "nonPositiveInteger",
    "NegativeInteger": "negativeInteger", "NormalizedString": "normalizedString",
    "Token": "token", "Language": "language", "Name": "Name", "NCName": "NCName",
    "NMTOKEN": "NMTOKEN", "NMTOKENS": "NMTOKENS", "ID": "ID", "IDREF": "IDREF",
    "IDREFS": "IDREFS", "ENTITY": "ENTITY", "ENTITIES": "ENTITIES", "NOTATION": "NOTATION",
    "AnyURI": "anyURI", "Duration": "duration", "GYear": "gYear", "GYearMonth": "gYearMonth",
    "GMonth": "gMonth", "GMonthDay": "gMonthDay", "GDay": "gDay", "HexBinary": "hexBinary",
    "QName": "QName", "AnyType": "anyType"}

#: XSD's lexical spaces, a value in and out of each (after the white space facet).
LEXICAL = {
    ParamType.INTEGER: (["42", " -7 ", "+0", "123456789012345678901234567890"],
                        ["4 2", "1.5", "abc", "", "1e3"]),
    ParamType.NON_NEGATIVE_INTEGER: (["0", "-0", "+5"], ["-1"]),
    ParamType.POSITIVE_INTEGER: (["1", "+99"], ["0", "-0"]),
    ParamType.NON_POSITIVE_INTEGER: (["0", "-5"], ["1"]),
    ParamType.NEGATIVE_INTEGER: (["-1"], ["0", "5"]),
    ParamType.LANGUAGE: (["en", "ar-SA", "x-klingon"], ["not a lang!", "abcdefghi", ""]),
    ParamType.NAME: (["a:b", "_x", "طالب"], ["1abc", "a b", ""]),
    ParamType.NCNAME: (["a_b.c-d"], ["a:b", "-a"]),
    ParamType.NMTOKEN: (["1:b", ".x"], ["a b", "!"]),
    ParamType.NMTOKENS: (["a b", "  a \t b  "], ["", "a !"]),
    ParamType.QNAME: (["x", "p:x"], ["x:", "a:b:c", "1x"]),
    ParamType.DURATION: (["P1Y2M3DT4H5M6.5S", "-PT1S", "P0D"], ["P", "PT", "P1DT", "1D", "P1S"]),
    ParamType.YEAR_MONTH_DURATION: (["P1Y", "-P13M"], ["P1D"]),
    ParamType.DAY_TIME_DURATION: (["P1DT2H", "PT0.5S"], ["P1Y"]),
    ParamType.DATETIME_STAMP: (["2024-01-31T12:34:56Z", "2024-01-31T12:34:56.5+02:00"],
                               ["2024-01-31T12:34:56", "2024-02-30T00:00:00Z"]),
    ParamType.G_YEAR: (["2024", "-0044", "12345", "2024Z"], ["24", "02024", "abc"]),
    ParamType.G_YEAR_MONTH: (["2024-01", "2024-12+14:00"], ["2024-13", "2024-1"]),
    ParamType.G_MONTH: (["--01", "--12Z"], ["--13", "13", "--1"]),
    ParamType.G_MONTH_DAY: (["--02-29", "--12-31"], ["--02-30", "--04-31", "--13-01"]),
    ParamType.G_DAY: (["---01", "---31-05:00"], ["---32", "---00", "x"]),
    ParamType.HEX_BINARY: (["", "0a0B", " DEADBEEF "], ["ABC", "0G", "0x0A", "0a 0b"]),
    ParamType.ANY_URI: (["http://example.org/a b", "::"], []),
    ParamType.TOKEN: (["\ta\n", " a  b "], []),
}


def harness(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=cwd,
                          text=True, capture_output=True, timeout=900, check=False)


def imported(tmp_path: Path, wsdl: str | Path) -> tuple[Path, dict]:
    out = tmp_path / "builtins.json"
    done = harness("contract", "--wsdl", wsdl, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return out, json.loads(out.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------- the import


def test_every_builtin_the_runtime_publishes_imports_as_itself(tmp_path: Path) -> None:
    """Builtins.wsdl, as the real runtime published it: no "complex" type named integer."""
    _, data = imported(tmp_path, BUILTINS / "Builtins.wsdl")
    ops = {op["name"]: op for op in data["operations"]}
    assert [(p["name"], p["type"]) for p in ops["Register"]["parameters"]] == [
        ("id", "integer"), ("count", "long"), ("active", "boolean"), ("when", "dateTime")]
    echoed = {name.removeprefix("Echo"): (op["parameters"][0]["type"], op["result"])
              for name, op in ops.items() if name.startswith("Echo")}
    assert {name: kind for name, (kind, _) in echoed.items()} == PUBLISHED
    assert all(result in (kind, "string") for kind, result in echoed.values())
    assert "types" not in data  # no empty complex type named after a built-in


def test_every_builtin_round_trips_through_the_reference_s_wsdl(tmp_path: Path) -> None:
    """XSD 1.1's types and anySimpleType, which .NET cannot publish, too: the reference
    publishes each, and its WSDL reads back as the same contract."""
    from harness.reference.server import running

    kinds = [k for k in ParamType if k.is_simple and k is not ParamType.ENUM]
    contract = Contract(tuple(Operation(f"Echo{k.name.title().replace('_', '')}", "/All.asmx",
                                        (Parameter("value", k),), result=k.value)
                              for k in kinds), NAMESPACE, "All")
    with running(contract=contract) as url:
        _, data = imported(tmp_path, f"{url}/All.asmx")
    assert [(op["parameters"][0]["type"], op["result"]) for op in data["operations"]] == [
        (k.value, k.value) for k in kinds]


# --------------------------------------------------------------- the lexical rules


@pytest.mark.parametrize("kind", LEXICAL, ids=lambda k: k.value)
def test_xsd_lexical_space(kind: ParamType) -> None:
    valid, invalid = LEXICAL[kind]
    assert [v for v in valid if not kind.lexical(v)] == []
    assert [v for v in invalid if kind.lexical(v)] == []


def test_the_xml_name_patterns_are_compiled_on_first_use_not_at_start() -> None:
    """The Name/NCName/NMTOKEN/QName patterns (XML's Unicode name ranges: ~36 ms to compile)
    are not compiled when a command starts (lint's start imports the types); the first check
    of such a value compiles them, and they judge as before (``test_xsd_lexical_space``)."""
    script = (
        "import re, sys\n"
        "compiled = []\n"
        "original = re._compile\n"
        "def noting(pattern, flags):\n"
        "    compiled.append(str(pattern))\n"
        "    return original(pattern, flags)\n"
        "re._compile = noting\n"
        "import harness.cli, harness.commands.lint, harness.judge.lint\n"
        "from harness.contract.types import ParamType\n"
        "at_start = [p for p in compiled if '\\U00010000' in p]\n"
        "checked = [ParamType.NCNAME.lexical('a_b'), ParamType.QNAME.lexical('p:x'),\n"
        "           ParamType.NAME.lexical('1abc'), ParamType.NMTOKEN.lexical('.x')]\n"
        "on_use = [p for p in compiled if '\\U00010000' in p]\n"
        "print(len(at_start), len(on_use), checked)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split(maxsplit=2) == ["0", "4", "[True, True, False, True]\n"]


def test_a_request_outside_xsd_s_form_is_tolerated_where_asmx_reads_any_text(
        tmp_path: Path) -> None:
    """An xs:integer "abc": ASMX takes it (a string), so the reference answers it too; the
    request breaks the WSDL all the same: R9-INTEGER fails it under the spec profile, a
    tolerated deviation (a warning under the asmx profile)."""
    contract = load(_saved_contract(tmp_path))
    op = contract.operation("EchoInteger")
    request = build_request(contract, op, {"value": "abc"}, Binding.SOAP11, "http://h")
    response = answer(contract, request)
    assert response.status == 200
    found = [f for f in judge(Exchange(request, response), contract)
             if f.rule == "R9-INTEGER"]
    assert [(f.verdict, f.actual) for f in found] == [(Verdict.FAILED, "'abc'")]
    assert "ASMX takes any text" in found[0].message


def test_the_asmx_matrix_writes_every_builtin_as_asmx_reads_it(tmp_path: Path) -> None:
    """The matrix's rows build for every built-in (a gDay's ``---01`` is not a number to add
    one to); GET/POST never send a byte array's field twice, which ASMX reads as two bytes
    (``?value=1&value=2`` is base64 ``AQI=``, not the text ``1,2``)."""
    from harness.judge import asmx_matrix

    contract = load(_saved_contract(tmp_path))
    for op in contract.operations:
        built = {m.row.id for m in asmx_matrix.requests_for(contract, op, "http://h")}
        twice_rows = {"get-duplicated", "post-duplicated"}
        twice = twice_rows & built
        assert "soap11-duplicated" in built, op.name
        offered = {f"{b}-duplicated" for b in contract.bindings_of(op)} & twice_rows
        assert twice == (set() if op.name == "EchoHexBinary" else offered), op.name


def _saved_contract(tmp_path: Path) -> Path:
    out, _ = imported(tmp_path, BUILTINS / "Builtins.wsdl")
    return out


# ------------------------------------------------------------ on the real ASMX runtime


@pytest.fixture(scope="module")
def real_builtins(asmx_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with real_runtime(asmx_home, BUILTINS, tmp_path_factory.mktemp("builtins") / "w") as url:
        yield url


def test_certify_of_the_real_service_and_of_the_reference_passes(real_builtins: str,
                                                                 tmp_path: Path) -> None:
    """The contract imported from the runtime's own WSDL: certify of the runtime passes, and
    certify of the reference serving that contract (every type in each; the bindings shared
    out between the two runs, which take a minute each over all four)."""
    from harness.reference.server import running

    saved, data = imported(tmp_path, f"{real_builtins}/Builtins.asmx")
    assert "complex" not in {p["type"] for op in data["operations"]
                             for p in op["parameters"]}
    done = harness("certify", "--target", real_builtins, "--contract", saved, "--no-html",
                   "--binding", "soap11", "--binding", "post", "--quiet",
                   "--report-dir", tmp_path / "real", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 failed, 0 warnings" in done.stdout
    with running(contract=load(saved)) as url:
        done = harness("certify", "--target", url, "--contract", saved, "--no-html",
                       "--binding", "soap12", "--binding", "get", "--quiet",
                       "--report-dir", tmp_path / "reference", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]


#: Texts outside XSD's form for a type .NET reads as a string: the runtime takes each.
OUTSIDE = {"Integer": "abc", "PositiveInteger": "-1", "Language": "not a lang!",
           "NCName": "a:b", "NMTOKEN": "a b", "Duration": "xyz", "GYear": "abc",
           "GMonthDay": "--02-30", "IDREFS": ""}


def _soap(url: str, operation: str, value: str) -> httpx.Response:
    body = (f'<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://'
            f'schemas.xmlsoap.org/soap/envelope/"><soap:Body><{operation} xmlns="{NAMESPACE}">'
            f"<value>{escape(value)}</value></{operation}></soap:Body></soap:Envelope>")
    return httpx.post(f"{url}/Builtins.asmx", content=body.encode(), timeout=30,
                      headers={"Content-Type": "text/xml; charset=utf-8",
                               "SOAPAction": f'"{NAMESPACE}{operation}"'})


def test_what_the_runtime_reads_is_what_accepts_says(real_builtins: str) -> None:
    """Out of XSD's form: read as given by the runtime, and ``accepts`` says so (the
    reference answers alike); hexBinary and QName are read by their own rules."""
    for name, value in OUTSIDE.items():
        kind = ParamType(PUBLISHED[name])
        got = _soap(real_builtins, f"Echo{name}", value)
        assert (got.status_code, kind.accepts(value), kind.lexical(value)) == (
            200, True, False), (name, value, got.text[:300])
    for name, value, read in (("HexBinary", "0a 0b", True), ("HexBinary", "ABC", True),
                              ("HexBinary", "0G", False), ("QName", "a b", True),
                              ("QName", "x:", False), ("QName", "a:b:c", False)):
        got = _soap(real_builtins, f"Echo{name}", value)
        assert (got.status_code == 200, ParamType(PUBLISHED[name]).accepts(value)) == (
            read, read), (name, value, got.status_code, got.text[:300])
