"""The ASMX matrix (issue 31 item 1): the real runtime's answers to requests outside the spec's
happy path, as data (harness/contract/asmx_matrix.json) that certify, probe and diff --errors
send. Here: the data and the code agree, the reference answers every row as ASMX does, the
verdicts (a value lost is a failure, another refusal a warning, a spec rule broken a failure,
nothing judged where the binding's plain call fails), the "Missed" behaviours of issue 31 as
findings on a careless stack, and the selection. The interop lane holds the real runtime to it
(test_asmx_matrix_interop.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from harness.contract.bindings import Binding, FaultCode, build_fault
from harness.contract.model import Contract, school_mobile
from harness.judge import asmx_matrix
from harness.judge.findings import Verdict
from harness.probe import checks
from harness.probe.cases import Expect, Family, ProbeCase
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic import send
from harness.traffic.exchange import HttpRequest, HttpResponse

ROOT = Path(__file__).resolve().parents[1]
FEATURE = ROOT / "features" / "asmx_matrix.feature"
CONTRACT = school_mobile()
BASE = "http://127.0.0.1:9"


def harness(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=cwd,
                          text=True, capture_output=True, timeout=600, check=False)


def row(row_id: str) -> asmx_matrix.Row:
    return next(r for r in asmx_matrix.matrix().rows if r.id == row_id)


def built(row_id: str, operation: str = "GetTokenDevice") -> asmx_matrix.MatrixRequest:
    made = asmx_matrix.build(CONTRACT, CONTRACT.find(operation), row(row_id), BASE)
    assert made is not None
    return made


# ------------------------------------------------------------------------------ the data


def test_every_row_has_a_builder_a_rule_and_a_step() -> None:
    data = json.loads(asmx_matrix.MATRIX.read_text(encoding="utf-8"))
    ids = [r["id"] for r in data["rows"]]
    assert len(ids) == len(set(ids)) == len(asmx_matrix.BUILDERS)
    assert set(ids) == set(asmx_matrix.BUILDERS)
    titles = asmx_matrix.titles()
    steps = set(re.findall(r"the client sends <operation> over (.+?) with (.+)",
                           FEATURE.read_text(encoding="utf-8")))
    wanted = set()
    for r in asmx_matrix.matrix().rows:
        assert r.rule in titles and r.words and r.expected.to_dict()
        assert set(r.expected.to_dict()) in ({"as"}, {"status", "type", "form"})
        assert {"default", "customerrors", "hardened"} <= set(
            next(d for d in data["rows"] if d["id"] == r.id)["observed"])
        wanted.add((r.binding.label, r.words))
    assert steps == wanted  # the feature says each row once, and nothing else


def test_the_feature_is_tagged_with_the_rules_its_scenarios_check() -> None:
    text = FEATURE.read_text(encoding="utf-8")
    for tags, body in re.findall(r"\n  (@[^\n]+)\n  Scenario Outline:(.+?)Examples", text,
                                 re.S):
        assert set(tags.split()) == {f"@{r}" for r in re.findall(r"\(([A-Z-]+)\)\n", body)}


# ------------------------------------------------------------------------- the reference


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with running() as url:
        yield url


def test_the_reference_answers_every_row_as_asmx_does(reference: str) -> None:
    """Over HTTP (a HEAD's body dropped by the server, as by ASP.NET's), every row for every
    operation it applies to passes."""
    judged: Counter[tuple[str, str]] = Counter()
    with send.Sender(send.SendOptions(timeout=10)) as sender:
        for mreq, answers in asmx_matrix.run(CONTRACT, reference, sender.send):
            verdict = asmx_matrix.verdict(mreq, answers)
            assert verdict.verdict is Verdict.PASSED, (mreq.row.id, mreq.operation.name,
                                                       verdict)
            judged[mreq.row.rule] += 1
    assert sum(judged.values()) > 300 and len(judged) == len(asmx_matrix.titles())


# ----------------------------------------------------------------------------- verdicts


def _xml(status: int, content_type: str, body: bytes) -> HttpResponse:
    return HttpResponse(status, (("Content-Type", content_type),), body)


def _token(binding: Binding, value: str, content_type: str | None = None) -> HttpResponse:
    from harness.contract.bindings import build_response

    response = build_response(CONTRACT, CONTRACT.find("GetTokenDevice"), binding, value)
    if content_type is None:
        return response
    return HttpResponse(response.status, (("Content-Type", content_type),), response.body)


OK = _token(Binding.HTTP_GET, "token-for-A10")


def test_a_success_that_loses_the_value_fails_where_asmx_keeps_it() -> None:
    """?ID=A10 answered 'token-for-' where ?id=A10 answers 'token-for-A10': a value lost."""
    judged = asmx_matrix.verdict(built("get-names-case"), asmx_matrix.Answers(
        _token(Binding.HTTP_GET, "token-for-"), OK, OK))
    assert judged.verdict is Verdict.FAILED
    assert judged.cause == ("HTTP GET with the parameter names in another case: another value "
                            "comes back than the spec call with the same values gives (a value "
                            "lost or changed)")
    assert judged.detail == "token-for- for token-for-A10"  # which value, beside the cause


def test_a_refusal_of_what_asmx_accepts_is_a_warning() -> None:
    """?id=A10&id=A10b refused with 400 where ASMX joins the values: a warning."""
    refused = _xml(400, "text/plain", b"Client.ValidationError")
    joined = _token(Binding.HTTP_GET, "token-for-A10,A10b")
    judged = asmx_matrix.verdict(built("get-duplicated"),
                                 asmx_matrix.Answers(refused, joined, OK))
    assert judged.verdict is Verdict.WARNING
    # both answers are the target's: ASMX's is that they are alike (issue 31: the side named)
    assert judged.cause == ("HTTP GET with each parameter twice: answered with HTTP 400, a "
                            "text/plain body, the spec call with the values joined with "
                            "commas with HTTP 200, string (ASMX answers both alike)")


def test_a_success_where_asmx_refuses_at_the_http_level_is_a_warning() -> None:
    """A SOAP 1.1 call typed application/xml answered as usual where ASMX gives 415: a client
    that follows the spec never sends it; nothing of the spec is broken."""
    usual = _token(Binding.SOAP11, "token-for-A10")
    judged = asmx_matrix.verdict(built("soap11-application-xml"),
                                 asmx_matrix.Answers(usual, None, usual))
    assert judged.verdict is Verdict.WARNING
    assert judged.cause == ("SOAP 1.1 with its body typed application/xml: answered with HTTP "
                            "200, GetTokenDeviceResponse where ASMX answers with HTTP 415, an "
                            "empty body")
    for head in ("soap11-head", "get-head"):  # HEAD answered 200 where ASMX refuses
        judged = asmx_matrix.verdict(built(head), asmx_matrix.Answers(
            HttpResponse(200, (), b""), None, usual))
        assert judged.verdict is Verdict.WARNING and "HTTP 200, an empty body" in judged.cause


def test_a_value_read_in_the_wrong_charset_and_labelled_so_fails_twice_in_one_line() -> None:
    """ISO-8859-1 read as UTF-8 (U+FFFD) and the UTF-8 answer labelled charset=iso-8859-1."""
    usual = _token(Binding.SOAP11, "token-for-A10\u00e9")
    broken = _token(Binding.SOAP11, "token-for-A10\ufffd", "text/xml; charset=iso-8859-1")
    judged = asmx_matrix.verdict(built("soap11-iso-8859-1"),
                                 asmx_matrix.Answers(broken, usual, usual))
    assert judged.verdict is Verdict.FAILED
    assert judged.cause == ("SOAP 1.1 with its body in ISO-8859-1, declared: answered with "
                            "Content-Type text/xml; charset=iso-8859-1, not text/xml; "
                            "charset=utf-8 (4.1 rule 7); the value changed too")
    # expected and actual name what differs; the values are the detail (issue 31)
    assert (judged.expected, judged.actual) == ("Content-Type text/xml; charset=utf-8",
                                                "Content-Type text/xml; charset=iso-8859-1")
    assert judged.detail == '"token-for-A10<REPLACEMENT CHARACTER>" for token-for-A10é'
    percent = _token(Binding.HTTP_POST, "token-for-A10%E9", "text/xml; charset=utf-8")
    usual = _token(Binding.HTTP_POST, "token-for-A10\u00e9")
    judged = asmx_matrix.verdict(built("post-iso-8859-1"),
                                 asmx_matrix.Answers(percent, usual, usual))
    assert judged.verdict is Verdict.FAILED and judged.detail.startswith("token-for-A10%E9 ")


def test_where_asmx_loses_the_value_itself_another_value_is_a_warning() -> None:
    """text/xml without charset is US-ASCII to ASMX ('??'); a stack keeping 'é' differs."""
    kept = _token(Binding.SOAP11, "token-for-\u00e9")
    lossy = _token(Binding.SOAP11, "token-for-??")
    judged = asmx_matrix.verdict(built("soap11-no-charset-non-ascii"),
                                 asmx_matrix.Answers(kept, lossy, lossy))
    assert judged.verdict is Verdict.WARNING and "ASMX loses it too" in judged.cause


def test_nothing_is_judged_where_the_plain_call_of_the_binding_fails() -> None:
    """A stack without HTTP GET (404 to every call) gets R4-STATUS, not a line per row."""
    missing = HttpResponse(404, (("Content-Type", "text/plain"),), b"Not Found")
    judged = asmx_matrix.verdict(built("get-operation-case"),
                                 asmx_matrix.Answers(missing, None, missing))
    assert judged.verdict is Verdict.NOT_APPLICABLE
    assert judged.cause == ("the plain HTTP GET call fails too (HTTP 404): nothing to compare "
                            "with")


def test_a_spec_rule_the_plain_call_breaks_alike_is_not_the_rows() -> None:
    """SOAP 1.2 answered in a SOAP 1.1 envelope everywhere: R5-ENVELOPE's cause, said there."""
    eleven = _token(Binding.SOAP11, "token-for-A10", "application/soap+xml; charset=utf-8")
    judged = asmx_matrix.verdict(built("soap12-no-charset"),
                                 asmx_matrix.Answers(eleven, eleven, eleven))
    assert judged.verdict is Verdict.PASSED
    judged = asmx_matrix.verdict(built("soap12-no-charset"), asmx_matrix.Answers(
        eleven, _token(Binding.SOAP12, "token-for-A10"), _token(Binding.SOAP12, "token-for-A10")))
    assert judged.verdict is Verdict.FAILED
    assert judged.cause == "SOAP 1.2 answered with a SOAP 1.1 envelope"


def test_diff_compares_by_shape_and_folds_a_missing_binding() -> None:
    mreq = built("get-names-case")
    lost = _token(Binding.HTTP_GET, "token-for-")
    [found] = asmx_matrix.compare(mreq, OK, lost)
    assert (found.kind, found.path, found.warning) == ("text", "/string", False)
    assert asmx_matrix.compare(mreq, OK, OK) == []
    missing = HttpResponse(404, (("Content-Type", "text/plain"),), b"Not Found")
    [found] = asmx_matrix.compare(built("get-options"), _xml(500, "text/html", b"<html/>"),
                                  missing)
    # in the words of every command (one line with theirs): the kind of request left out
    # a failure as every other call diff --errors finds not served (spec 4.1: four bindings)
    assert not found.warning and found.summary == "HTTP 404: the call is not served"
    # two configurations of ASMX: 405 at the endpoint stock, 500 with Documentation removed
    page = b"<html><body>x</body></html>"
    assert asmx_matrix.compare(built("soap11-options"), _xml(405, "text/html", page),
                               _xml(500, "text/html", page)) == []


# ------------------------------------------------------------------- a careless stack


def _careless(contract: Contract, request: HttpRequest) -> HttpResponse:
    """The "Missed" behaviours of issue 31, each as a stack showed it: GET/POST names matched
    exactly (a value in another case silently dropped), a SOAP body of any Content-Type
    answered, ISO-8859-1 read as UTF-8 and the answer labelled with the request's charset,
    duplicated fields refused with 400, HEAD and OPTIONS answered 200."""
    if request.method in ("HEAD", "OPTIONS"):
        return HttpResponse(200, (), b"")
    parts = urlsplit(request.url)
    if request.method == "GET" and parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if len({n for n, _ in pairs}) < len(pairs):
            return _xml(400, "text/plain", b"duplicated field")
        op = contract.find(parts.path.rsplit("/", 1)[-1])
        names = {p.name for p in op.parameters} if op else set()
        exact = [(n if n in names else next((m for m in names if m.lower() == n.lower()), n),
                  v if n in names else "") for n, v in pairs]
        request = HttpRequest(request.method, parts._replace(query=urlencode(exact)).geturl(),
                              request.headers, request.body)
    charset = (request.content_type or "").partition("charset=")[2]
    if not parts.path.endswith(".asmx/GetTokenDevice") and request.method == "POST":
        body = request.body.decode("utf-8", errors="replace").replace(
            'encoding="iso-8859-1"', 'encoding="utf-8"').encode("utf-8")
        typed = "text/xml; charset=utf-8" if request.header("SOAPAction") is not None \
            else "application/soap+xml; charset=utf-8"
        request = HttpRequest(request.method, request.url, request.headers, body).with_header(
            "Content-Type", typed).with_header("Content-Length", str(len(body)))
        response = answer(contract, request)
        if charset and charset != "utf-8":
            media = (response.content_type or "").split(";")[0]
            return HttpResponse(response.status, (("Content-Type",
                                                   f"{media}; charset={charset}"),),
                                response.body)
        return response
    return answer(contract, request)


def test_the_missed_behaviours_are_findings_on_a_stack_that_shows_them(tmp_path: Path) -> None:
    with running(app=create_app(CONTRACT, respond=_careless)) as url:
        done = harness("certify", "--target", url, "--operation", "GetTokenDevice",
                       "--no-html", "--json", tmp_path / "c.json", "--report-dir",
                       tmp_path / "reports", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    found = {(f["extra"] if "extra" in f else f.get("matrix"), f["verdict"])
             for f in data["findings"] if f["rule"].startswith("ODD-") and "matrix" in f}
    assert {("get-names-case", "failed"), ("soap11-application-xml", "warning"),
            ("soap11-no-content-type", "warning"), ("soap11-iso-8859-1", "failed"),
            ("soap11-iso-8859-1-undeclared", "failed"), ("get-duplicated", "warning"),
            ("soap11-head", "warning"), ("soap11-options", "warning"),
            ("get-head", "warning"), ("get-options", "warning")} <= found, found
    lines = done.stdout
    assert ("HTTP GET with the parameter names in another case: another value comes back than "
            "the spec call with the same values gives (a value lost or changed): ") in lines
    assert "SOAP 1.1 with the method HEAD: answered with HTTP 200, an empty body where ASMX " \
           "answers with HTTP 405 or 500, an empty body" in lines


def test_an_unselected_operation_or_binding_is_never_sent(tmp_path: Path) -> None:
    """certify --operation GetTokenDevice --binding 'HTTP GET': the matrix sends GetTokenDevice
    over HTTP GET only (its rows, their spec calls); the other bindings' scenarios skip."""
    seen: list[HttpRequest] = []

    def noting(contract: Contract, request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return answer(contract, request)

    with running(app=create_app(CONTRACT, respond=noting)) as url:
        done = harness("certify", "--target", url, "--operation", "GetTokenDevice",
                       "--binding", "HTTP GET", "--no-html", "--json", tmp_path / "c.json",
                       "--report-dir", tmp_path / "reports", "--rule", "ODD-NAMES",
                       "--rule", "ODD-METHOD", "--rule", "ODD-VALUES", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    sent = {(r.method, urlsplit(r.url).path + "?" + urlsplit(r.url).query) for r in seen}
    ours = {(m, t) for m, t in sent if t.lower().startswith("/pushnotificationmobile.asmx/")}
    assert ours and all(m in ("GET", "HEAD", "OPTIONS") for m, _ in ours), ours
    # the check that the target is this service, before any feature (issue 30 item 1): the
    # selected operation's service description only, no other operation invoked
    assert sent - ours <= {("GET", "/PushNotificationMobile.asmx?WSDL")}, sent - ours
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    judged = {(f["operation"], f["binding"]) for f in data["findings"]
              if f["rule"] in ("ODD-NAMES", "ODD-METHOD", "ODD-VALUES")}
    assert judged <= {("GetTokenDevice", "HTTP GET")}


# ------------------------------------------------------------------------------ probe


def _case(binding: Binding) -> ProbeCase:
    op = CONTRACT.find("LogoutFromSchool")
    request = HttpRequest("POST", f"{BASE}/CenterlogOut.asmx")
    return ProbeCase("envelope/truncated", Family.ENVELOPE, op, binding, request,
                     Expect.REFUSAL, "the call cut in the middle")


@pytest.mark.parametrize(("response", "verdict"), [
    (_xml(500, "text/xml", b"TypeError: Cannot read properties of undefined (reading 'x')\n"
                           b"    at p.onopentag (/app/node_modules/soap/lib/wsdl/index.js)"),
     Verdict.FAILED),
    (_xml(500, "text/plain", b"A server error occurred.  Please contact the administrator."),
     Verdict.FAILED),
    (_xml(500, "text/xml", b"<error>x</error>"), Verdict.FAILED),
    (_xml(400, "text/xml; charset=utf-8", b""), Verdict.PASSED),  # ASMX, malformed XML
    (_xml(405, "text/html", b"<html><body>Method Not Allowed</body></html>"), Verdict.PASSED),
    (build_fault(Binding.SOAP12, FaultCode.CLIENT, "bad"), Verdict.PASSED),
])
def test_rob_fault_shape_refuses_an_error_body_no_soap_client_reads(
        response: HttpResponse, verdict: Verdict) -> None:
    """A text/xml body holding a JavaScript stack, a SOAP 1.2 call answered text/plain: no
    SOAP error (issue 31, "Missed"); ASMX's empty 400 and HTML 405 page are."""
    outcome = checks.fault_shape(_case(Binding.SOAP12), checks.Answer(response, 0.01), 5.0)
    assert outcome.verdict is verdict, outcome


def test_probe_judges_the_matrix_rows_of_its_operations(tmp_path: Path) -> None:
    """The names-case and duplicated GET cases the probe used to send unjudged are matrix rows
    now, judged by their rule; the reference passes them all."""
    done = harness("probe", "--max-requests", "400", "--operation", "GetTokenDevice",
                   "--binding", "HTTP GET", "--json", tmp_path / "p.json", "--allure-dir", "",
                   "--failures", tmp_path / "f.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    for rule in ("ODD-NAMES", "ODD-DUPLICATES", "ODD-METHOD", "ODD-VALUES"):
        assert data["rules"][rule] == {"passed": len(
            [r for r in asmx_matrix.rows_of(Binding.HTTP_GET) if r.rule == rule])}, rule
