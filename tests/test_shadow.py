"""``harness shadow`` with real servers on loopback: the embedded reference as primary; as
candidate the reference again behind a counting layer, or a candidate that never answers.

Clients get the primary's answers byte for byte; ``--skip-operation AuthCode`` keeps every
AuthCode call (and anything that might be one) off the candidate; a dead candidate costs the
clients nothing and every call it did not answer is counted and named; Ctrl-C (SIGINT, with
the default disposition a terminal gives) and ``--duration`` end with the report and an
intact recording of both answers. (Real ASMX as primary, spyne as candidate, zeep/Node/curl:
tests/test_shadow_interop.py.)
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hostile import serve as hostile

from harness.capture.process import _children
from harness.contract.bindings import Binding, build_request, classify
from harness.contract.model import Contract, sample_arguments
from harness.errors import ClassificationError
from harness.reference.app import create_app
from harness.reference.server import running
from harness.shadow.choice import SKIPPED, UNCOMPARED, Choice
from harness.shadow.process import ShadowProcess
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse, response_from_dict
from harness.traffic.recording import read_exchanges, read_header

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Counting:
    """An ASGI layer that notes every request before the reference answers it."""

    def __init__(self, app) -> None:
        self.app = app
        self.seen: list[HttpRequest] = []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = tuple((k.decode(), v.decode()) for k, v in scope["headers"])
        query = f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        self.seen.append(HttpRequest(scope["method"], f"http://candidate{scope['path']}{query}",
                                     headers, body))
        given = False

        async def again():
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, again, send)


def calls(contract: Contract, base: str) -> list[HttpRequest]:
    """Every operation over every binding, plain values."""
    return [build_request(contract, op, sample_arguments(op), binding, base)
            for op in contract.operations for binding in Binding]


def send(http: httpx.Client, request: HttpRequest) -> httpx.Response:
    return http.request(request.method, request.url, content=request.body or None,
                        headers=[(k, v) for k, v in request.headers
                                 if k.lower() not in ("host", "content-length")])


def shadow_meta(exchanges: list[Exchange]) -> list[dict]:
    return [e.meta["shadow"] for e in exchanges]


# -- the reference against itself, AuthCode kept off the mirror --------------------------------


@pytest.fixture(scope="module")
def skipped(contract, reference_url, tmp_path_factory):
    """Every call over every binding, a malformed SOAP call to AuthCode's endpoint and a WSDL
    fetch through shadow (--skip-operation AuthCode); the live view looked at while it runs;
    stopped with SIGINT."""
    counting = Counting(create_app(contract))
    folder = tmp_path_factory.mktemp("skip")
    out = folder / "shadow.jsonl"
    with running(contract, app=counting) as candidate, \
            ShadowProcess(reference_url, candidate, out, "--skip-operation", "AuthCode",
                          "--json", str(folder / "shadow.json"),
                          "--junit", str(folder / "shadow.xml"),
                          "--allure-dir", str(folder / "allure")) as shadow, \
            httpx.Client(trust_env=False, timeout=30) as http:
        through = [send(http, r) for r in calls(contract, shadow.url)]
        direct = [send(http, r) for r in calls(contract, reference_url)]
        auth = contract.find("AuthCode")
        # a SOAP call cut short (taken as AuthCode, its endpoint's one operation), and a
        # body that is no call at all (unclassified): neither may reach the candidate
        odd = [send(http, HttpRequest("POST", f"{shadow.url}{auth.endpoint}",
                                      (("Content-Type", kind),), body))
               for kind, body in (("text/xml; charset=utf-8", b"<soap:Envelope xmlns:soap="),
                                  ("application/octet-stream", b"garbage"))]
        wsdl = http.get(f"{shadow.url}{auth.endpoint}?WSDL")
        viewed = live(http, shadow.live_url, seen=len(through) + 3)
        listening = listening_addresses([shadow.proc.pid, *_children(shadow.proc.pid)])
        page = _rendered(shadow.live_url)
        code, stdout, stderr = shadow.stop()
    return dict(code=code, stdout=stdout, stderr=stderr, through=through, direct=direct,
                odd=odd, wsdl=wsdl, live=viewed, page=page, listening=listening,
                seen=counting.seen, out=out, proxy=shadow.url, folder=folder,
                primary=reference_url)


def listening_addresses(pids: list[int]) -> set[str]:
    """The local addresses the processes ``pids`` listen on (TCP), from the kernel's tables:
    their sockets' inodes matched with /proc/net/tcp{,6} rows in state LISTEN."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                raw = bytes.fromhex(fields[1].split(":")[0])
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(str(ipaddress.ip_address(words)))
    return found


def live(http: httpx.Client, url: str, seen: int, in_flight: int = 0) -> dict:
    """The live view's data, once it has seen ``seen`` calls and has ``in_flight`` of them in
    flight, none waiting (at most a minute)."""
    base, token = url.split("/?token=")
    for _ in range(600):
        data = http.get(f"{base}/data.json", params={"token": token}).json()
        if data["seen"] >= seen and not data["waiting"] and data["in_flight"] == in_flight:
            break
        time.sleep(0.1)
    return {"data": data,
            "page": http.get(url).status_code,
            "no token": http.get(f"{base}/data.json").status_code,
            "wrong token": http.get(f"{base}/data.json", params={"token": token + "x"}
                                    ).status_code,
            "wrong host": http.get(f"{base}/data.json", params={"token": token},
                                   headers={"Host": "attacker.example"}).status_code}


def _rendered(url: str) -> str:
    """The live view's DOM after its script ran, in headless chromium ('' without one)."""
    if CHROMIUM is None:
        return ""
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", url],
            capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


def test_nothing_listens_beyond_loopback(skipped):
    assert skipped["listening"] == {"127.0.0.1"}  # the proxy and the live view


def test_clients_get_the_primarys_answers_byte_for_byte(skipped):
    for proxied, direct in zip(skipped["through"], skipped["direct"], strict=True):
        assert (proxied.status_code, proxied.content) == (direct.status_code, direct.content)
        assert proxied.headers.get("content-type") == direct.headers.get("content-type")
    # a WSDL still names the proxy, as capture makes it
    assert f'location="{skipped["proxy"]}/'.encode() in skipped["wsdl"].content


def test_a_skipped_operation_never_reaches_the_candidate(contract, skipped):
    def operation(request: HttpRequest) -> str:
        try:
            return classify(contract, request).operation.name
        except ClassificationError:
            return "?"

    seen = skipped["seen"]
    # not a call to its endpoint, not even the malformed one (its WSDL is no call: mirrored)
    assert not [r for r in seen if "authcodesending" in r.url.lower() and "?WSDL" not in r.url]
    mirrored = [operation(r) for r in seen if "?WSDL" not in r.url]
    assert sorted(mirrored) == sorted(op.name for op in contract.operations
                                      if op.name != "AuthCode" for _ in Binding)
    assert sum("?WSDL" in r.url for r in seen) == 1  # a description is no call: mirrored


def test_the_recording_holds_both_answers_and_old_readers_read_it(contract, skipped):
    header = read_header(skipped["out"])
    assert header["shadow"]["primary"] == skipped["primary"]
    exchanges = list(read_exchanges([skipped["out"]]))  # the reader every command uses
    assert len(exchanges) == len(contract.operations) * 4 + 3
    for exchange in exchanges:
        meta = exchange.meta["shadow"]
        if exchange.meta.get("operation") == "AuthCode" or "unclassified" in exchange.meta:
            assert meta["mirrored"] is False and "AuthCode" in meta["reason"]
            assert "candidate" not in meta
            continue
        assert meta["mirrored"] is True and meta["differences"] == []
        candidate = response_from_dict(meta["candidate"]["response"])
        assert candidate.status == exchange.response.status
        if exchange.meta.get("operation") == "GetTokenDevice":  # redacted like the primary's
            assert b"redacted-" in exchange.response.body
            assert candidate.body == exchange.response.body


def test_no_difference_exits_0_with_the_report_in_every_form(contract, skipped):
    assert skipped["code"] == 0, skipped["stderr"][-3000:]
    stdout = skipped["stdout"]
    assert "MIRROR: 35 call(s) through the proxy: 29 mirrored, 29 compared (0 differing), " \
           "6 not mirrored by choice, 0 not compared" in stdout
    assert "not mirrored by choice: --skip-operation AuthCode: 5" in stdout
    assert "shadow: PASSED for " in stdout and "AuthCode not judged" in stdout
    report = json.loads((skipped["folder"] / "shadow.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "passed" and report["shadow"]["compared"] == 29
    assert (skipped["folder"] / "shadow.xml").read_text(encoding="utf-8").count("<testcase") > 0
    assert list((skipped["folder"] / "allure").glob("*-result.json"))


def test_the_live_view_needs_its_token_and_shows_the_counts(skipped):
    live = skipped["live"]
    assert (live["page"], live["no token"], live["wrong token"], live["wrong host"]) == (
        200, 403, 403, 421)
    data = live["data"]
    assert (data["seen"], data["compared"], data["differing"]) == (35, 29, 0)
    assert data["skipped"] == {"--skip-operation AuthCode": 5,
                               "unclassified, to the endpoint of --skip-operation AuthCode": 1}
    if CHROMIUM is not None:  # the page as a person sees it: built by its script
        assert "No difference so far." in skipped["page"]
        roles = skipped["page"].split('id="roles"', 1)[1].split("</p>", 1)[0]
        assert "null" not in roles and "secondary" not in roles, roles  # none was given
        assert "--skip-operation AuthCode" in skipped["page"]


# -- a candidate that never answers -------------------------------------------------------------


def test_a_dead_candidate_costs_the_clients_nothing_and_every_call_is_counted(
        contract, reference_url, tmp_path, monkeypatch):
    """Six calls at once, a candidate that accepts and never answers, one call mirrored at
    a time with a queue of one: every client is answered by the primary; each call is either
    not answered by the candidate (a failure: 'no answer'), found the queue full, or was still
    waiting when --duration ended (warnings): all six counted, named, and recorded. The
    progress line counts them as the report does: not compared, none differing."""
    monkeypatch.setenv("HARNESS_PROGRESS_SECONDS", "0.2")
    op = contract.find("GetTokenDevice")
    with hostile("silent") as dead, ShadowProcess(
            reference_url, dead, tmp_path / "dead.jsonl", "--timeout", "2", "--jobs", "1",
            "--queue", "1", "--duration", "5", "--json", str(tmp_path / "dead.json"),
            "--allure-dir", "") as shadow, httpx.Client(trust_env=False, timeout=30) as http:
        requests = [build_request(contract, op, sample_arguments(op), Binding.SOAP11,
                                  shadow.url)] * 6
        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda r: send(http, r), requests))
        shadow.proc.wait(timeout=60)  # --duration ends it
        code, stdout, stderr = shadow.stop()
    assert [a.status_code for a in answers] == [200] * 6
    assert max(a.elapsed.total_seconds() for a in answers) < 2  # never the candidate's 2 s
    assert code == 1, stderr[-3000:]
    report = json.loads((tmp_path / "dead.json").read_text(encoding="utf-8"))
    counts = report["shadow"]
    assert counts["seen"] == 6 and counts["compared"] == 0
    assert sum(counts["not_compared"].values()) == 6
    assert any("mirror queue was full" in why for why in counts["not_compared"])
    assert "no answer: " in stdout and "did not answer within 2 s" in stdout
    lines = [line for line in stderr.splitlines() if line.startswith("shadow: ")
             and " calls mirrored, " in line]
    assert lines and all(" 0 differing" in line for line in lines), lines
    assert "not compared" in lines[-1], lines
    recorded = list(read_exchanges([tmp_path / "dead.jsonl"]))
    assert len(recorded) == 6 and all("reason" in m or "error" in m.get("candidate", {})
                                      for m in shadow_meta(recorded))


def test_a_second_ctrl_c_stops_waiting_for_the_candidate(contract, reference_url, tmp_path):
    """Stopping waits for the calls in flight (each within --timeout, here 60 s); Ctrl-C
    again ends that wait at once, and the call is counted as not compared."""
    op = contract.find("GetTokenDevice")
    with hostile("silent") as dead, ShadowProcess(
            reference_url, dead, tmp_path / "hurry.jsonl", "--timeout", "60", "--quiet",
            "--allure-dir", "") as shadow, httpx.Client(trust_env=False, timeout=30) as http:
        send(http, build_request(contract, op, sample_arguments(op), Binding.SOAP11,
                                 shadow.url))
        live(http, shadow.live_url, seen=1, in_flight=1)
        shadow.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        while "stopping:" not in "".join(shadow._stderr) and time.monotonic() < deadline:
            time.sleep(0.1)
        started = time.monotonic()
        code, stdout, stderr = shadow.stop()  # the second SIGINT
    assert time.monotonic() - started < 30, stderr  # not the candidate's 60 s
    assert "stopping at once" in stderr
    assert code == 2, stderr  # nothing compared
    assert "not compared: shadow stopped before the candidate answered: 1" in stdout
    [recorded] = read_exchanges([tmp_path / "hurry.jsonl"])
    assert recorded.meta["shadow"] == {
        "mirrored": True, "reason": "not compared: shadow stopped before the candidate answered"}


# -- what is mirrored --------------------------------------------------------------------------


def _exchange(contract, op_name: str | None, binding: Binding = Binding.SOAP11,
              **meta) -> Exchange:
    op = contract.find(op_name or "AuthCode")
    request = build_request(contract, op, sample_arguments(op), binding, "http://primary")
    classified = {"operation": op_name, "binding": binding.value} if op_name else {}
    return Exchange(request, HttpResponse(200), meta={**classified, **meta})


def test_mirror_and_skip_operations_are_honoured_exactly(contract):
    both = Choice(contract, frozenset({"GetTokenDevice", "AuthCode"}), frozenset({"AuthCode"}))
    assert both.why_not(_exchange(contract, "GetTokenDevice")) is None
    assert both.why_not(_exchange(contract, "AuthCode")) == (SKIPPED, "--skip-operation AuthCode")
    assert both.why_not(_exchange(contract, "SendMarkNotes"))[0] == SKIPPED
    # with --mirror-operation, nothing but its calls: no description, nothing unclassified
    assert both.why_not(_exchange(contract, None, description="WSDL"))[0] == SKIPPED
    skip = Choice(contract, skip_operations=frozenset({"AuthCode"}))
    wsdl = HttpRequest("GET", "http://primary/AuthCodeSending.asmx?WSDL")
    assert skip.why_not(Exchange(wsdl, HttpResponse(200), meta={"description": "WSDL"})) is None
    # ASP.NET answers a GET of the endpoint with its help page, whatever it carries: an
    # AuthCode envelope and SOAPAction with it might be a call to a candidate
    help_page = _exchange(contract, None, description="help page")
    help_page.request = replace(help_page.request, method="GET")
    assert skip.why_not(help_page) == (
        SKIPPED, "a description request with a body or SOAP action, to the endpoint of "
                 "--skip-operation AuthCode")
    assert skip.why_not(Exchange(replace(wsdl, headers=(("SOAPAction", "x"),)),
                                 HttpResponse(200), meta={"description": "WSDL"}))[0] == SKIPPED
    assert nothing_skipped_at_others(contract, skip)
    assert skip.why_not(_exchange(contract, None, unclassified="bad envelope")) == (
        SKIPPED, "unclassified, to the endpoint of --skip-operation AuthCode")
    nothing = Choice(contract)
    unanswered = _exchange(contract, "AuthCode")
    unanswered.response = None
    assert nothing.why_not(unanswered) == (UNCOMPARED, "the primary gave no answer")


def nothing_skipped_at_others(contract, choice: Choice) -> bool:
    """A help page GET with a body to another endpoint is mirrored as before."""
    request = HttpRequest("GET", "http://primary/CenterlogOut.asmx", body=b"x")
    return choice.why_not(Exchange(request, HttpResponse(200),
                                   meta={"description": "help page"})) is None


def test_a_request_the_mirror_cannot_send_as_it_came_is_not_compared(contract):
    """Two different requests' answers would differ falsely: a request target with bytes
    that are not UTF-8 (mitmproxy keeps them as surrogates; the mirror would send them
    percent-encoded) or with dot segments (the sending path resolves them)."""
    nothing = Choice(contract)
    exchange = _exchange(contract, None, unclassified="no operation")
    raw = "http://primary/AuthCodeSending.asmx/AuthCode?code=\udcff&phone=1"
    assert nothing.why_not(exchange, raw)[0] == UNCOMPARED
    assert "not UTF-8" in nothing.why_not(exchange, raw)[1]
    dots = "http://primary/CenterlogOut.asmx/../../etc/passwd"
    assert "dot segments" in nothing.why_not(exchange, dots)[1]
    assert nothing.why_not(exchange, "http://primary/CenterlogOut.asmx/x..y") is None


def test_a_compressed_primary_answer_is_compared_as_the_sending_path_reads_one():
    import gzip

    from harness.traffic.send import as_received

    body = b"<x>answer</x>"
    zipped = HttpResponse(200, (("Content-Type", "text/xml"), ("Content-Encoding", "gzip"),
                                ("Content-Length", "99")), gzip.compress(body))
    request = HttpRequest("POST", "http://primary/X.asmx")
    got = as_received(zipped, request, 1 << 20)
    assert got.body == body and got.headers == (("Content-Type", "text/xml"),)
    plain = HttpResponse(200, (("Content-Type", "text/xml"),), body)
    assert as_received(plain, request, 1 << 20) is plain


def test_a_killed_proxy_loses_no_call_it_answered(contract, reference_url, tmp_path):
    """kill -9 of the proxy: the worker still mirrors, records and reports every call handed
    to it (its input ends; it writes what it holds)."""
    out = tmp_path / "killed.jsonl"
    op = contract.find("GetTeacherSubjectsByID")
    with ShadowProcess(reference_url, reference_url, out, "--quiet", "--allure-dir", "",
                       "--no-live") as shadow, httpx.Client(trust_env=False, timeout=30) as http:
        answers = [send(http, build_request(contract, op, sample_arguments(op), binding,
                                            shadow.url)) for binding in Binding]
        shadow.kill()
    assert [a.status_code for a in answers] == [200] * 4
    recorded = list(read_exchanges([out]))
    assert [e.meta["shadow"]["mirrored"] for e in recorded] == [True] * 4


def test_the_live_tally_sorts_and_names_causes_as_the_console_does():
    """A candidate that did not answer is a failure, not a difference: the live view lists it
    under that name, first, and does not count it among the causes of differences (the
    console puts it under FAILURES, not DIFFERENCES)."""
    from harness.judge.findings import Finding, Verdict
    from harness.shadow.tally import Tally

    tally = Tally({"primary": "p", "candidate": "c"})
    body = Finding("DIFF-BODY", Verdict.FAILED, "AuthCode", "SOAP 1.1", index=1,
                   cause="soapAction differs")
    tally.compared_call([body, body], dict)
    tally.compared_call([replace(body, index=2)], dict)
    silent = Finding("SEND-TRANSPORT", Verdict.FAILED, "AuthCode", "SOAP 1.1", index=3,
                     cause="no answer: c did not answer within 2 s")
    tally.not_compared(silent.cause, [silent])
    causes = tally.snapshot()["causes"]
    assert [(c["cause"], c["difference"], c["calls"]) for c in causes] == [
        ("no answer: c did not answer within 2 s", False, 1), ("soapAction differs", True, 2)]
    assert tally.line.startswith("1 x no answer: ")


def test_a_worker_that_falls_behind_does_not_stall_the_clients(contract, reference_url,
                                                                tmp_path):
    """The worker stopped (SIGSTOP: as a worker starved of CPU at its lower priority looks
    from the proxy) while 4 MB of calls go through, four times the hand-over pipe: every
    client is answered (the proxy holds what the pipe cannot take, up to its backlog, instead
    of waiting for the worker), and once the worker goes on, every call is recorded."""
    out = tmp_path / "behind.jsonl"
    body = b"<x>" + b"y" * (256 << 10) + b"</x>"
    with ShadowProcess(reference_url, reference_url, out, "--quiet", "--allure-dir", "",
                       "--no-live") as shadow, httpx.Client(trust_env=False, timeout=30) as http:
        [worker] = _children(shadow.proc.pid)
        os.kill(worker, signal.SIGSTOP)
        try:
            statuses = [http.post(f"{shadow.url}/CenterlogOut.asmx", content=body,
                                  headers={"Content-Type": "text/xml; charset=utf-8"}
                                  ).status_code for _ in range(16)]
        finally:
            os.kill(worker, signal.SIGCONT)
        code, _stdout, stderr = shadow.stop()
    assert len(statuses) == 16 and all(s < 502 for s in statuses), statuses  # the primary's
    assert code in (0, 1), stderr[-2000:]
    assert len(list(read_exchanges([out]))) == 16


class Leaking:
    """An ASGI layer: a request with ``leak`` in its query gets a 500 with a stack trace (as
    ASP.NET's error page gives one); the rest goes to the reference."""

    TRACE = (b"System.NullReferenceException: Object reference not set to an instance of an "
             b"object.\r\n   at School.Mobile.CenterlogOut.LogoutFromSchool() in "
             b"C:\\src\\CenterlogOut.asmx.cs:line 42")

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or b"leak" not in scope["query_string"]:
            return await self.app(scope, receive, send)
        await send({"type": "http.response.start", "status": 500,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
        await send({"type": "http.response.body", "body": self.TRACE})


def test_the_live_view_counts_a_leaking_answer_as_the_report_does(contract, reference_url,
                                                                   tmp_path):
    """SEC-LEAK, diff's passive check of error answers, is a warning in the final report: the
    live view names it too, as the calls come (it only appeared once shadow stopped)."""
    with running(contract, app=Leaking(create_app(contract))) as primary, ShadowProcess(
            primary, reference_url, tmp_path / "leak.jsonl", "--quiet", "--allure-dir", "",
            "--json", str(tmp_path / "leak.json")) as shadow, \
            httpx.Client(trust_env=False, timeout=30) as http:
        http.get(f"{shadow.url}/CenterlogOut.asmx/LogoutFromSchool?leak=1")
        data = live(http, shadow.live_url, seen=1)["data"]
        shadow.stop()
    report = json.loads((tmp_path / "leak.json").read_text(encoding="utf-8"))
    final = {(c["verdict"], c["cause"]) for c in report["causes"] if "SEC-LEAK" in c["rules"]}
    seen = {(c["verdict"], c["cause"]) for c in data["causes"] if "SEC-LEAK" in c["rules"]}
    assert final and seen == final, (seen, final)
