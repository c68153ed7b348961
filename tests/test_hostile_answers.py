"""Recordings holding what no server could send (hand-edited files, other tools' exports): a
line break in a header value, a space in a header name, a status of 999, 0 or -1, a GET URL
over 64 KiB. Each is served or refused as one line, never an empty reply with a traceback:
``harness mock`` answers every call something a client reads, ``harness scenarios`` leaves
out what no step can say and writes features certify runs, ``harness replay`` reports the
request it cannot send as that exchange's finding and replays the others. Real processes,
asked by httpx over loopback; recordings written as capture writes them (tests/traffic.py).
"""

from __future__ import annotations

import signal
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from test_mock import Served
from test_scenarios import certify_features, harness
from traffic import exchange, request, write_recording

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.traffic.exchange import Exchange

#: Each hostile answer, recorded for GetTokenDevice(id=<name>) over SOAP 1.1.
HOSTILE_HEADERS = {
    "crlf": ("X-Evil", "a\r\nSet-Cookie: session=stolen"),
    "space": ("X Evil", "1"),
}
HOSTILE_STATUSES = {"s999": 999, "s0": 0, "sneg": -1}
UTF8_HEADER = ("X-Device", "Galaxy de José €")


def _token_call(contract: Contract, identifier: str, binding: Binding = Binding.SOAP11
                ) -> Exchange:
    """GetTokenDevice(id=identifier), answered by the reference, as capture records it."""
    call = request(contract, "GetTokenDevice", binding)
    if binding is Binding.SOAP11:
        call = replace(call, body=call.body.replace(b">A10<", f">{identifier}<".encode()))
    return exchange(contract, call)


def _hostile_recording(contract: Contract, path: Path) -> Path:
    hostile = []
    for name, header in HOSTILE_HEADERS.items():
        e = _token_call(contract, name)
        e.response = replace(e.response, headers=(*e.response.headers, header))
        hostile.append(e)
    for name, status in HOSTILE_STATUSES.items():
        e = _token_call(contract, name)
        e.response = replace(e.response, status=status)
        hostile.append(e)
    utf8 = _token_call(contract, "utf8")  # capture decodes a header's bytes as UTF-8
    utf8.response = replace(utf8.response, headers=(*utf8.response.headers, UTF8_HEADER))
    return write_recording(path, [*hostile, _token_call(contract, "plain"), utf8])


def _soap11(contract: Contract, url: str, identifier: str) -> httpx.Response:
    sent = _token_call(contract, identifier).request
    return httpx.post(f"{url}/PushNotificationMobile.asmx", content=sent.body, timeout=60,
                      headers={k: v for k, v in sent.headers
                               if k.lower() in ("content-type", "soapaction")})


def test_the_mock_answers_every_hostile_recorded_answer_and_says_so_in_one_line(
        contract: Contract, tmp_path: Path) -> None:
    path = _hostile_recording(contract, tmp_path / "hostile.jsonl")
    served = Served(str(path), cwd=tmp_path)
    try:
        answers = {name: _soap11(contract, served.url, name)
                   for name in [*HOSTILE_HEADERS, *HOSTILE_STATUSES, "plain", "utf8"]}
    finally:
        code, _out, err = served.stop(signal.SIGINT)
    assert code == 0 and "Traceback" not in err, err
    for name in HOSTILE_HEADERS:  # served without the header HTTP cannot carry
        assert answers[name].status_code == 200, answers[name]
        assert "<GetTokenDeviceResult>" in answers[name].text
        assert not {"x-evil", "x evil", "set-cookie"} & set(answers[name].headers)
    for line, name in enumerate(HOSTILE_STATUSES, start=4):
        refused = answers[name]
        assert refused.status_code == 502 and refused.headers["content-type"].startswith(
            "text/plain"), refused
        assert refused.text == (f"harness mock: GetTokenDevice: the answer recorded at "
                                f"{path}:{line} cannot be sent: status "
                                f"{HOSTILE_STATUSES[name]} is no HTTP status (100-599)")
    assert answers["plain"].status_code == 200 and answers["plain"].headers[
        "x-harness-mock"] == "recorded"
    assert answers["utf8"].status_code == 200  # the header's bytes as recorded
    assert (b"x-device", UTF8_HEADER[1].encode("utf-8")) in answers["utf8"].headers.raw
    said = [x for x in err.splitlines() if "cannot send" in x or "cannot be sent" in x]
    assert said == [
        f"harness mock: error: GetTokenDevice: the answer recorded at {path}:2 has what HTTP "
        "cannot send (header X-Evil: a line break (CR) in its value): answered without it",
        f"harness mock: error: GetTokenDevice: the answer recorded at {path}:3 has what HTTP "
        "cannot send (header 'X Evil': a space in its name): answered without it",
        *(f"harness mock: error: GetTokenDevice: the answer recorded at {path}:{line} cannot "
          f"be sent: status {status} is no HTTP status (100-599): answered 502 Bad Gateway"
          for line, status in enumerate(HOSTILE_STATUSES.values(), start=4))]


def test_scenarios_leave_out_a_status_http_has_not_and_certify_runs_the_rest(
        contract: Contract, tmp_path: Path) -> None:
    _hostile_recording(contract, tmp_path / "hostile.jsonl")
    done = harness("scenarios", "hostile.jsonl", "-o", "features", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "scenarios: left out 3 exchange(s): a status HTTP has not (outside 100-599)" \
        in done.stdout.splitlines(), done.stdout
    run = certify_features(tmp_path / "run", {}, "--features", str(tmp_path / "features"))
    assert run.code == 0, run.stdout + run.stderr
    assert set(run.scenarios.values()) == {("passed", "")} and len(run.scenarios) == 4


@pytest.fixture(scope="module")
def long_url_recording(contract: Contract, tmp_path_factory) -> Path:
    """A GET whose URL is over 64 KiB and one with a line break in a header's value, between
    two plain calls."""
    plain = exchange(contract, request(contract, "GetTokenDevice", Binding.HTTP_GET))
    long_url = replace(plain.request, url=plain.request.url.split("?")[0]
                       + "?id=" + "a" * 70_000)
    folder = tmp_path_factory.mktemp("long-url")
    broken_header = plain.request.with_header("X-Trace", "a\r\nX-Injected: 1")
    utf8 = exchange(contract, request(contract, "GetTokenDevice", Binding.HTTP_GET, 2,
                                      client="SchoolMobile/2.3 (Galaxy de José €)"))
    return write_recording(folder / "long.jsonl", [
        plain, Exchange(long_url, plain.response), Exchange(broken_header, plain.response),
        exchange(contract, request(contract, "GetTokenDevice", Binding.HTTP_GET, 1)), utf8])


def test_replay_reports_a_url_it_cannot_send_as_that_exchanges_finding(
        long_url_recording: Path, reference_url: str) -> None:
    done = harness("replay", str(long_url_recording), "--target", reference_url,
                   cwd=long_url_recording.parent)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "broken" not in done.stdout + done.stderr
    failures = {x for x in done.stdout.splitlines() if "[REPLAY-TRANSPORT]" in x}
    assert failures == {
        "  the request cannot be sent: its URL is 70,069 characters long (at most 65,536 are "
        f"sent) -- GetTokenDevice x HTTP GET #2 in {long_url_recording} [REPLAY-TRANSPORT]",
        "  the request cannot be sent: header X-Trace: a line break (CR) in its value -- "
        f"GetTokenDevice x HTTP GET #3 in {long_url_recording} [REPLAY-TRANSPORT]"}, done.stdout
    verdict = next(x for x in done.stdout.splitlines() if x.startswith("replay: FAILED"))
    assert "over 5 calls" in verdict and "2 failed" in verdict, verdict  # the UTF-8 one passes


def test_load_reports_a_url_it_cannot_send_and_sends_the_rest(long_url_recording: Path,
                                                              reference_url: str) -> None:
    done = harness("load", str(long_url_recording), "--target", reference_url, "--users", "2",
                   cwd=long_url_recording.parent)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert f"#2 in {long_url_recording} [REPLAY-TRANSPORT]" in done.stdout, done.stdout
    assert "load: 5 requests in " in done.stdout, done.stdout


def test_requests_never_sent_do_not_count_as_a_silent_target(contract: Contract,
                                                             reference_url: str) -> None:
    """A run stops after max_failures requests in a row get no answer (the target is down);
    requests that were never sent say nothing of the target."""
    from harness.errors import NotSendable
    from harness.traffic.send import Sender, SendOptions, retarget

    plain = request(contract, "GetTokenDevice", Binding.HTTP_GET)
    long_url = replace(plain, url=plain.url + "a" * 70_000)
    sender = Sender(SendOptions(max_failures=2))
    for _ in range(3):
        with pytest.raises(NotSendable, match="its URL is 70,"):
            sender.send(retarget(long_url, reference_url))
    assert sender.send(retarget(plain, reference_url)).status == 200


def test_the_mock_answers_a_fallback_s_status_http_has_not_with_a_502(contract: Contract,
                                                                      tmp_path: Path) -> None:
    from hostile import serve

    with serve("odd-status") as upstream:
        served = Served("--fallback", upstream, cwd=tmp_path)
        try:
            answer = httpx.get(f"{served.url}/PushNotificationMobile.asmx/GetTokenDevice",
                               params={"id": "7"}, timeout=60)
        finally:
            code, _out, err = served.stop(signal.SIGINT)
    assert answer.status_code == 502 and answer.headers["x-harness-mock"] == "forwarded"
    assert answer.text.endswith(f"the answer of the fallback {upstream} cannot be sent: status "
                                "999 is no HTTP status (100-599)"), answer.text
    assert code == 0 and "Traceback" not in err, err
    assert f"the answer of the fallback {upstream} cannot be sent: status 999 is no HTTP " \
        "status (100-599): answered 502 Bad Gateway" in err, err
