"""``harness shadow`` on real stacks: the real ASMX runtime as primary (stock) and as
secondary (customErrors On), School Mobile on spyne as candidate; zeep and Node's ``soap``
(each loading the WSDL through the shadow) and curl call every operation over all four
bindings through it.

Done means (issue 33): the clients get answers byte-identical to the primary's direct ones;
SIGTERM ends it with exit 1 and the cause lines naming spyne's differences, the very causes
``harness diff`` names for the same pair on the same requests; the recording holds both
answers of every call.
"""

from __future__ import annotations

import json
import signal

import httpx
import pytest
from test_capture_clients import _curl, _node, _zeep
from test_shadow import calls, live, send

from harness.diff import Diff, Targets, recorded_cases
from harness.shadow.process import ShadowProcess
from harness.traffic.exchange import response_from_dict
from harness.traffic.recording import read_exchanges

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def shadowed(contract, asmx_url, asmx_customerrors_url, spyne_url, tmp_path_factory):
    folder = tmp_path_factory.mktemp("shadow-interop")
    out = folder / "shadow.jsonl"
    with ShadowProcess(asmx_url, spyne_url, out, "--json", str(folder / "shadow.json"),
                       "--allure-dir", "", "--quiet", secondary=asmx_customerrors_url) as shadow:
        clients = _zeep(contract, shadow.url) + _node(contract, shadow.url) + _curl(
            contract, shadow.url)
        with httpx.Client(trust_env=False, timeout=60) as http:
            through = [send(http, r) for r in calls(contract, shadow.url)]
            direct = [send(http, r) for r in calls(contract, asmx_url)]
            # every call, and the 21 WSDLs the SOAP clients loaded (zeep per client, Node
            # once per URL), mirrored before the stop
            live(http, shadow.live_url, seen=len(clients) + 21 + len(through))
        code, stdout, stderr = shadow.stop(signal.SIGTERM)  # as a CI runner cancels
    report = json.loads((folder / "shadow.json").read_text(encoding="utf-8"))
    return dict(code=code, stdout=stdout, stderr=stderr, clients=clients, through=through,
                direct=direct, out=out, report=report,
                targets=Targets(asmx_url, spyne_url, asmx_customerrors_url))


def test_clients_get_the_real_asmx_answers_byte_for_byte(contract, shadowed):
    assert len(shadowed["clients"]) == len(contract.operations) * 6  # zeep, node, curl all ran
    for proxied, direct in zip(shadowed["through"], shadowed["direct"], strict=True):
        assert proxied.status_code == direct.status_code
        assert proxied.content == direct.content
        assert proxied.headers.get("content-type") == direct.headers.get("content-type")


def test_sigterm_reports_the_stacks_differences_and_exits_1(shadowed):
    assert shadowed["code"] == 1, shadowed["stderr"][-3000:]
    stdout = shadowed["stdout"]
    assert "\nDIFFERENCES: " in stdout
    for cause in ("Content-Type text/plain where none is expected", "soapAction differs",
                  "answer form: an XML <string> document expected, a text/plain body given"):
        assert f"\n  {cause}" in stdout, cause
    assert "shadow: FAILED - " in stdout
    counts = shadowed["report"]["shadow"]
    assert counts["seen"] == counts["mirrored"] == counts["compared"] == 101  # none left out


def test_the_recording_holds_both_answers_of_every_call(shadowed):
    exchanges = list(read_exchanges([shadowed["out"]]))
    assert len(exchanges) == shadowed["report"]["shadow"]["seen"]
    for exchange in exchanges:
        mirrored = exchange.meta["shadow"]
        assert mirrored["mirrored"] is True, mirrored
        for role in ("candidate", "secondary"):
            assert response_from_dict(mirrored[role]["response"]).status >= 200


def test_the_causes_are_those_harness_diff_names_for_the_same_pair(contract, shadowed):
    """``harness diff`` of the shadow's own recording against the same three deployments:
    the same causes, each on as many calls."""
    diff = Diff(contract, shadowed["targets"], command="diff")
    result = diff.run(recorded_cases(contract, [shadowed["out"]]))

    def causes(data) -> set[tuple[str, str, int]]:
        return {(c["verdict"], c["cause"], c["calls"]) for c in data}

    assert causes(shadowed["report"]["causes"]) == causes(
        c.to_dict() for c in result.report.ordered_causes())
