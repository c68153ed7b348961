"""One face for every secret, in every output (issue 30 item 6). Known secrets go through
certify, replay, diff, probe and load, each writing every output it can (console, JSON,
JUnit, Allure, HTML, CSV), to a real echoing deployment on loopback (tests/echoing.py: it
mirrors every request header, quotes the values AuthCode was sent in its refusal, answers
GetTokenDevice's ``token-for-<id>`` as text over GET/POST) and, in the interop lane, to the
real ASMX runtime; every file written and the console are searched for the secrets in clear
(the HTML report's embedded attachments, base64, decoded too). The echoed ``-H`` value is
shown by one pseudonym wherever it shows."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from echoing import serve_echoing

from harness.traffic.keys import write_key
from harness.traffic.redaction import pseudonym

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"
CREDENTIAL = "acme-s3cret-7"
CODE, PHONE = "CODE-4711-x", "0509998877"
SECRETS = (CREDENTIAL.encode(), CODE.encode(), PHONE.encode(), b"token-for-")
VALUES = f'[AuthCode]\ncode = "{CODE}"\nphone = "{PHONE}"\n[GetTokenDevice]\nid = "D1"\n'
_ECHOED = re.compile(r"x-echo-x-tenant: (\S+)", re.IGNORECASE)


@pytest.fixture(scope="module", params=["echoing", pytest.param("asmx", marks=pytest.mark.interop)])
def echoing_url(request) -> str:
    """The target: the echoing deployment, and (interop lane) the real ASMX runtime."""
    if request.param == "asmx":
        yield request.getfixturevalue("asmx_url")
        return
    with serve_echoing() as url:
        yield url


@pytest.fixture(scope="module")
def clear_recording(contract, tmp_path_factory) -> Path:
    """A recording made without redaction (test data): AuthCode with the personal values and
    GetTokenDevice over every binding, answered by the reference."""
    from traffic import BASE, exchange, write_recording

    from harness.contract.bindings import Binding, build_request

    calls = [(op, args) for op, args in ((contract.operation("AuthCode"),
                                          {"code": CODE, "phone": PHONE}),
                                         (contract.operation("GetTokenDevice"), {"id": "D1"}))]
    return write_recording(tmp_path_factory.mktemp("clear") / "clear.jsonl", [
        exchange(contract, build_request(contract, op, args, binding, BASE))
        for op, args in calls for binding in Binding])


def run(folder: Path, *args: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "values.toml").write_text(VALUES, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "harness", *args, "-H", f"X-Tenant: {CREDENTIAL}"],
                          cwd=folder, text=True, capture_output=True, timeout=600, check=False,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout + done.stderr


def written(folder: Path, console: str) -> str:
    """Every file the command wrote and its console, as one text; AssertionError naming the
    file that holds a secret in clear (the HTML report's base64 attachments decoded)."""
    seen = [console]
    assert not [s for s in SECRETS if s in console.encode()], console
    for path in (p for p in folder.rglob("*") if p.is_file() and p.name != "values.toml"):
        data = path.read_bytes()
        assert not [s for s in SECRETS if s in data], path
        if path.suffix == ".html":
            for chunk in re.findall(rb"[A-Za-z0-9+/]{40,}={0,2}", data):
                usable = chunk.rstrip(b"=")[:len(chunk.rstrip(b"=")) // 4 * 4]
                decoded = base64.b64decode(usable)
                assert not [s for s in SECRETS if s in decoded], path
        seen.append(data.decode("utf-8", "replace"))
    return "\n".join(seen)


def one_face(text: str) -> None:
    """The echoed -H value shows (by an echoing target), and always by the same pseudonym."""
    faces = set(_ECHOED.findall(text))
    assert len(faces) <= 1 and all(re.fullmatch(r"redacted-[0-9a-f]{16}", f) for f in faces)


def test_certify(echoing_url: str, tmp_path: Path):
    key = bytes(range(32))
    write_key(tmp_path / "keys" / "run.key", key)
    out = run(tmp_path, "certify", "--target", echoing_url, "--values", "values.toml",
              "--operation", "AuthCode", "--operation", "GetTokenDevice", "--json", "c.json",
              "--junit", "c.xml", "--report-dir", "rep", "--key-file", "keys/run.key")
    text = written(tmp_path, out)
    one_face(text)
    quoted = set(re.findall(r"Invalid code '(redacted-[0-9a-f]{16})'", text))
    if quoted:  # the echoing target quotes the --values code: by its pseudonym under the key
        assert pseudonym(CODE, key) in quoted, quoted
    # (the ASMX matrix sends other values too: other pseudonyms, each one face; never a
    # pseudonym of a pseudonym)
    shown = set(re.findall(r"redacted-[0-9a-f]{16}", text))
    assert not {pseudonym(face, key) for face in shown} & shown


@pytest.mark.parametrize("recording", ["sample", "clear"])
def test_replay(echoing_url: str, clear_recording: Path, tmp_path: Path, recording: str):
    path = SAMPLE if recording == "sample" else clear_recording
    out = run(tmp_path, "replay", str(path), "--target", echoing_url, "--quiet", "--json",
              "r.json", "--junit", "r.xml")
    one_face(written(tmp_path, out))


def test_diff(echoing_url: str, reference_url: str, tmp_path: Path):
    out = run(tmp_path, "diff", "--primary", reference_url, "--candidate", echoing_url,
              "--operation", "AuthCode", "--operation", "GetTokenDevice", "--quiet", "--json",
              "d.json", "--junit", "d.xml", "--allure-dir", "allure")
    one_face(written(tmp_path, out))


def test_probe(echoing_url: str, tmp_path: Path):
    # (GetTokenDevice for the plain call between cases: the echoing target refuses AuthCode)
    out = run(tmp_path, "probe", "--target", echoing_url, "--operation", "AuthCode",
              "--operation", "GetTokenDevice", "--max-requests", "150", "--quiet", "--json",
              "p.json", "--junit", "p.xml", "--allure-dir", "allure", "--failures",
              "failures.jsonl")
    one_face(written(tmp_path, out))


def test_load(echoing_url: str, clear_recording: Path, tmp_path: Path):
    out = run(tmp_path, "load", str(clear_recording), str(SAMPLE), "--target", echoing_url,
              "--quiet", "--json", "l.json", "--junit", "l.xml", "--html", "l.html", "--csv",
              "l")
    text = written(tmp_path, out)
    if "Invalid code" in text:  # the echoing target's refusal quoting the values: redacted
        assert "Invalid code 'redacted-" in text


def test_call(echoing_url: str, tmp_path: Path):
    """harness call prints the request and the answer: the values given and the -H value an
    echoing target says back, by one pseudonym each, in the console and the JSON."""
    out = run(tmp_path, "call", "AuthCode", f"code={CODE}", f"phone={PHONE}", "--all-bindings",
              "--target", echoing_url, "--json", "call.json")
    assert re.search(r"^call: (PASSED|FAILED) - .* over 4 calls", out, re.M), out
    text = written(tmp_path, out)
    one_face(text)
    if "Invalid code" in text:  # the echoing target's refusal quoting the values: redacted
        assert len(set(re.findall(r"Invalid code '(redacted-[0-9a-f]{16})'", text))) == 1
        assert "Invalid code '…'" in text or "Invalid code 'redacted-" in text


def test_shadow(echoing_url: str, reference_url: str, contract, tmp_path: Path, request):
    """shadow mirrors the clients' calls (personal values in them) with a -H credential to an
    echoing candidate: its recording (the candidate's answers too), JSON, JUnit and Allure
    show each secret by one pseudonym, the recording's."""
    import httpx

    from harness.contract.bindings import Binding, build_request
    from harness.shadow.process import ShadowProcess

    calls = [(contract.operation("AuthCode"), {"code": CODE, "phone": PHONE}),
             (contract.operation("GetTokenDevice"), {"id": "D1"})]
    with ShadowProcess(reference_url, echoing_url, tmp_path / "shadow.jsonl", "--json",
                       str(tmp_path / "s.json"), "--junit", str(tmp_path / "s.xml"),
                       "--allure-dir", str(tmp_path / "allure"), "--no-live",
                       "-H", f"X-Tenant: {CREDENTIAL}") as shadow, \
            httpx.Client(trust_env=False, timeout=30) as http:
        for op, args in calls:
            for binding in Binding:
                sent = build_request(contract, op, args, binding, shadow.url)
                http.request(sent.method, sent.url, headers=list(sent.headers),
                             content=sent.body)
        code, stdout, stderr = shadow.stop()
    assert code in (0, 1), stderr
    text = written(tmp_path, stdout + stderr)
    one_face(text)
    if request.node.callspec.params["echoing_url"] == "echoing":  # its echoes were recorded
        assert "x-echo-x-tenant" in text.lower()
