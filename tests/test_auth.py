"""Authentication on every command that sends (docs/authentication.md): real protected fronts of
the service (tests/auth_servers.py: Basic, Digest, NTLM, Negotiate, a cookie login, mTLS, and a
WS-Security front on Node's soap), the real commands, and the credentials nowhere in what they
write. Right credentials: exit 0; wrong ones: exit 2 and one line naming what the target asked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from auth_servers import CERT_PASSWORD, NTLM_USER, PASSWORD, USER, Pki, stats
from lxml import etree

from harness.cli import main
from harness.errors import UsageError
from harness.traffic import wsse
from harness.traffic.auth import AuthOptions, Secret, offered_schemes

HARNESS = [sys.executable, "-m", "harness"]
SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample-all-bindings.jsonl"
ONE = ["--operation", "GetTokenDevice", "--quiet"]


def harness(*args: str | Path, cwd: Path | None = None, env: dict | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=env, check=False)


def refused(capsys, *argv: str) -> str:
    """The one line of a run the target refused (in-process: the pre-run check sends first)."""
    code = main(list(argv))
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    return err


# ------------------------------------------------------------------- right credentials


def test_certify_behind_ntlm_passes_over_authenticated_connections(ntlm_front: str,
                                                                   tmp_path: Path) -> None:
    """The whole run (every operation, binding and odd request) through an NTLM front: each
    handshake and the requests after it on one connection (fewer handshakes than requests),
    and the password in no output."""
    before = stats(ntlm_front)
    done = harness("certify", "--target", ntlm_front, "--user", NTLM_USER, "--ntlm",
                   "--json", tmp_path / "c.json", "--junit", tmp_path / "c.xml", "--no-html",
                   "--report-dir", tmp_path / "r", "--quiet", cwd=tmp_path,
                   env={**_env(), "HARNESS_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    after = stats(ntlm_front)
    handshakes, passed = (after["handshakes"] - before["handshakes"],
                          after["passed"] - before["passed"])
    assert passed >= 140 and 1 <= handshakes <= after["connections"] - before["connections"]
    assert handshakes * 5 < passed, (handshakes, passed)  # connections stay authenticated
    _nowhere(PASSWORD, tmp_path, done)


def test_certify_with_a_pkcs12_client_certificate(mtls_front: str, pki: Pki,
                                                  tmp_path: Path) -> None:
    done = harness("certify", "--target", mtls_front, "--cacert", pki.ca, "--cert",
                   pki.client_p12, "--no-html", "--report-dir", tmp_path, *ONE,
                   env={**_env(), "HARNESS_CERT_PASSWORD": CERT_PASSWORD})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr


def test_certify_with_basic_from_the_config_file(basic_front: str, tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(
        f'target = "{basic_front}"\nuser = "{USER}:${{QA_PASSWORD}}"\nbasic = true\n'
        'operations = ["GetTokenDevice"]\n', encoding="utf-8")
    done = harness("certify", "--no-html", "--quiet", cwd=tmp_path,
                   env={**_env(), "QA_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr


def test_certify_with_a_cookie_login(cookie_front: str, tmp_path: Path) -> None:
    done = harness("certify", "--target", cookie_front, "--login-url", f"{cookie_front}/login",
                   "--login-data", "user=alice&password=${QA_PASSWORD}", "--no-html",
                   "--report-dir", tmp_path, *ONE, env={**_env(), "QA_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert PASSWORD not in done.stdout + done.stderr


def test_certify_with_a_usernametoken_digest_verified_by_node_soap(wsse_front: str,
                                                                  tmp_path: Path) -> None:
    """Every SOAP envelope (1.1 and 1.2, odd requests included) carries a fresh token the
    front verifies with soap.passwordDigest before the service sees it."""
    done = harness("certify", "--target", wsse_front, "--wsse-user", f"{USER}:{PASSWORD}",
                   "--binding", "soap11", "--binding", "soap12", "--json", tmp_path / "c.json",
                   "--no-html", "--report-dir", tmp_path / "r", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    _nowhere(PASSWORD, tmp_path, done)


#: The right credentials of each front ({...}: a file of the pki fixture).
RIGHT = {
    "ntlm_front": ["--user", f"{NTLM_USER}:{PASSWORD}", "--ntlm"],
    "negotiate_front": ["--user", f"{NTLM_USER}:{PASSWORD}", "--negotiate"],
    "digest_front": ["--user", f"{USER}:{PASSWORD}", "--digest"],
    "basic_front": ["--user", f"{USER}:{PASSWORD}"],
    "mtls_front": ["--cert", "{client_cert}:" + CERT_PASSWORD, "--key", "{client_key}",
                   "--cacert", "{ca}"],
    "mtls_p12": ["--cert", "{client_p12}:" + CERT_PASSWORD, "--cacert", "{ca}"],
}
#: Wrong ones: the password, or (mTLS) a certificate of a CA the front does not trust.
WRONG = {
    "ntlm_front": ["--user", f"{NTLM_USER}:nope", "--ntlm"],
    "basic_front": ["--user", f"{USER}:nope"],
    "mtls_front": ["--cert", "{rogue_cert}", "--cacert", "{ca}"],
}
#: What the one line of each refusal says.
SAID = {"ntlm_front": "refused the NTLM credentials of --user: HTTP 401",
        "basic_front": "refused the Basic credentials of --user: HTTP 401",
        "mtls_front": "the server refused the client certificate --cert"}


def _flags(flags: list[str], pki: Pki) -> list[str]:
    return [f.format(**{k: str(v) for k, v in vars(pki).items()}) for f in flags]


def _front_url(request, front: str) -> str:
    return request.getfixturevalue("mtls_front" if front == "mtls_p12" else front)


@pytest.mark.parametrize("front", ["ntlm_front", "negotiate_front", "digest_front",
                                   "basic_front", "mtls_front"])
def test_replay_through_each_front(front: str, request, pki: Pki) -> None:
    # NTLM over the default concurrency (processes x threads, a connection each); the
    # others in one process
    many = [] if front == "ntlm_front" else ["--concurrency", "1"]
    done = harness("replay", SAMPLE, "--target", _front_url(request, front),
                   *_flags(RIGHT[front], pki), "--quiet", *many)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "PASSED" in done.stdout


@pytest.mark.parametrize("front", ["ntlm_front", "basic_front", "mtls_front"])
def test_diff_of_a_front_and_the_deployment_behind_it(front: str, request, pki: Pki,
                                                      auth_upstream: str) -> None:
    """Authentication where the target asks for it: the front, and the deployment behind it
    that asks for none (an unasked Basic header or certificate is ignored), answer alike."""
    done = harness("diff", "--primary", _front_url(request, front), "--candidate",
                   auth_upstream, *_flags(RIGHT[front], pki), *ONE)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr


@pytest.mark.parametrize("front", ["ntlm_front", "basic_front", "mtls_p12"])
def test_load_through_each_front(front: str, request, pki: Pki) -> None:
    done = harness("load", SAMPLE, "--target", _front_url(request, front),
                   *_flags(RIGHT[front], pki), "--quiet", "--rate", "50")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "load: PASSED" in done.stdout


# ------------------------------------------------------------------- wrong credentials


@pytest.mark.parametrize("front", list(WRONG))
@pytest.mark.parametrize("command", ["certify", "replay", "diff", "load", "probe"])
def test_wrong_credentials_are_one_line_and_exit_2(capsys, command: str, front: str, request,
                                                   pki: Pki) -> None:
    """Every sending command checks the target before the run (in this process, before
    load's child starts): nothing is judged, the line names what the target asked for."""
    url = request.getfixturevalue(front)
    where = {"diff": ["--primary", url, "--candidate", url], "replay": [str(SAMPLE), "--target",
             url], "load": [str(SAMPLE), "--target", url]}.get(command, ["--target", url])
    line = refused(capsys, command, *where, *_flags(WRONG[front], pki), "--quiet")
    assert SAID[front] in line and "nope" not in line


def test_no_credentials_names_what_the_target_asks_for(capsys, negotiate_front: str) -> None:
    line = refused(capsys, "replay", str(SAMPLE), "--target", negotiate_front, "--quiet")
    assert "asks for authentication" in line and "Negotiate, NTLM" in line
    assert "--negotiate or --ntlm" in line


def test_another_scheme_than_the_target_asks_for(capsys, digest_front: str) -> None:
    line = refused(capsys, "diff", "--primary", digest_front, "--candidate", digest_front,
                   "--user", f"{USER}:{PASSWORD}", *ONE)
    assert "asks for Digest authentication, not Basic" in line and "--digest" in line


def test_a_wsdl_behind_ntlm_is_fetched_with_the_credentials(capsys, ntlm_front: str) -> None:
    """--wsdl URL of a protected deployment: the WSDL comes through the same handshake."""
    from harness.commands.options import contract_from
    from harness.traffic.send import SendOptions

    args = type("Args", (), {"contract": None, "namespace": None,
                             "wsdl": [f"{ntlm_front}/PushNotificationMobile.asmx"]})()
    auth = AuthOptions(scheme="ntlm", user=NTLM_USER, password=Secret(PASSWORD))
    contract = contract_from(args, SendOptions(auth=auth))
    assert [op.name for op in contract.operations] == ["GetTokenDevice"]


def test_wrong_usernametoken_password_names_the_stacks_fault(wsse_front: str,
                                                             tmp_path: Path) -> None:
    """The check before the run invokes no operation (a ?WSDL carries no UsernameToken): the
    run's first SOAP call is refused, and the run ends there, with one line."""
    done = harness("certify", "--target", wsse_front, "--wsse-user", f"{USER}:nope",
                   "--no-html", "--report-dir", tmp_path, *ONE, cwd=tmp_path,
                   env=_env())
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "error" in line]
    assert "refused the WS-Security UsernameToken (PasswordDigest)" in line
    assert "wsse:FailedAuthentication" in line


def test_failed_cookie_login(capsys, cookie_front: str) -> None:
    line = refused(capsys, "certify", "--target", cookie_front, "--login-url",
                   f"{cookie_front}/login", "--login-data", "user=alice&password=nope",
                   "--no-html")
    assert "set no cookie" in line and "nope" not in line


def test_client_certificate_missing_or_refused(capsys, mtls_front: str, pki: Pki) -> None:
    line = refused(capsys, "certify", "--target", mtls_front, "--cacert", str(pki.ca),
                   "--no-html", *ONE)
    assert "the server asks for a client certificate: give --cert" in line
    line = refused(capsys, "certify", "--target", mtls_front, "--cacert", str(pki.ca),
                   "--cert", str(pki.rogue_cert), "--no-html", *ONE)
    assert f"the server refused the client certificate --cert {pki.rogue_cert}" in line


def test_unusable_certificate_files_are_one_line(capsys, pki: Pki) -> None:
    line = refused(capsys, "certify", "--target", "https://127.0.0.1:9", "--cert",
                   f"{pki.client_p12}:wrong")
    assert "wrong password, or not PKCS#12" in line
    line = refused(capsys, "certify", "--target", "https://127.0.0.1:9", "--cert",
                   str(pki.client_cert), "--key", str(pki.client_key))
    assert "is encrypted: give its password" in line


# ----------------------------------------------------------------------- the pieces


def test_offered_schemes_of_www_authenticate() -> None:
    assert offered_schemes(["Negotiate", "NTLM"]) == ["Negotiate", "NTLM"]
    assert offered_schemes(['Digest realm="a, b", nonce="x", qop="auth"', 'Basic realm="z"']
                           ) == ["Digest", "Basic"]
    assert offered_schemes(["NTLM TlRMTVNTUAACAAAA=="]) == ["NTLM"]


def test_passwords_never_show_in_a_repr() -> None:
    auth = AuthOptions(scheme="ntlm", user="u", password=Secret("hunter2"),
                       wsse=wsse.UsernameToken("u", Secret("hunter3")))
    assert "hunter" not in repr(auth) and "hunter" not in str(auth.password)


def test_no_password_without_a_terminal_is_a_usage_error(monkeypatch) -> None:
    from harness.commands.options import credentials

    monkeypatch.delenv("HARNESS_PASSWORD", raising=False)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    with pytest.raises(UsageError, match="set HARNESS_PASSWORD, or run on a terminal"):
        credentials("alice", "HARNESS_PASSWORD", "--user")
    assert credentials("alice", "HARNESS_PASSWORD", "--user", ask=lambda p: "typed")[
        1].reveal() == "typed"
    monkeypatch.setenv("HARNESS_PASSWORD", "from-env")
    assert credentials("alice", "HARNESS_PASSWORD", "--user")[1].reveal() == "from-env"


ENVELOPE_11 = (b'<?xml version="1.0" encoding="utf-8"?>\n<soap:Envelope xmlns:soap='
               b'"http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice '
               b'xmlns="http://tempuri.org/"><id>7</id></GetTokenDevice></soap:Body>'
               b'</soap:Envelope>')
ENVELOPE_12 = (b'<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Header/>'
               b'<env:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>7</id>'
               b'</GetTokenDevice></env:Body></env:Envelope>')


@pytest.mark.parametrize("body", [ENVELOPE_11, ENVELOPE_12])
def test_usernametoken_as_wse3_sends_it(body: bytes) -> None:
    token = wsse.UsernameToken("alice", Secret("pw"))
    stamped = wsse.stamp(body, token)
    root = etree.fromstring(stamped)
    header = root[0]
    security = header[0]
    assert etree.QName(header).localname == "Header" and etree.QName(security).text == (
        f"{{{wsse.WSSE_NS}}}Security")
    assert security.get(f"{{{etree.QName(root).namespace}}}mustUnderstand") == "1"
    ns = {"wsse": wsse.WSSE_NS, "wsu": wsse.WSU_NS}
    nonce = base64.b64decode(security.findtext("wsse:UsernameToken/wsse:Nonce", namespaces=ns))
    created = security.findtext("wsse:UsernameToken/wsu:Created", namespaces=ns)
    digest = base64.b64encode(hashlib.sha1(nonce + created.encode() + b"pw").digest()).decode()
    assert len(nonce) == 16
    assert security.findtext("wsse:UsernameToken/wsse:Password", namespaces=ns) == digest
    assert security.find("wsu:Timestamp/wsu:Expires", ns) is not None
    # spliced: the envelope as built, byte for byte, around the new header
    prefix = etree.QName(root).localname and root.prefix.encode()
    empty = b"" if body is ENVELOPE_11 else b"<env:Header/>"
    assert re.sub(rb"<%s:Header>.*</%s:Header>" % (prefix, prefix), empty, stamped,
                  flags=re.S) == body
    again = wsse.stamp(stamped, token)  # a recorded token is replaced, not added to
    assert again.count(b"</wsse:UsernameToken>") == 1 and again != stamped


def test_only_soap_envelopes_get_a_token() -> None:
    token = wsse.UsernameToken("alice", Secret("pw"))
    assert wsse.stamp(b"PhoneNumber=1&UuId=u", token) is None
    assert wsse.stamp(b"<soap:Envelope><broken", token) is None
    assert wsse.stamp(b'<Envelope xmlns="urn:other"><Body/></Envelope>', token) is None
    utf16 = ENVELOPE_11.replace(b"utf-8", b"utf-16").decode().encode("utf-16")
    assert b"UsernameToken" in wsse.stamp(utf16, token).decode("utf-16").encode()


# ----------------------------------------------------------------------------- helpers


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_PASSWORD")}


def _nowhere(secret: str, folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert secret not in done.stdout + done.stderr
    for path in folder.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    digest_like = json.dumps(secret)[1:-1]
    assert digest_like not in done.stdout


def test_one_client_shared_by_threads_keeps_each_ntlm_handshake_whole(ntlm_front: str) -> None:
    """A bare client (probe's, mock's forwarding) under NTLM has one connection: a request
    of another thread never slips between a handshake's legs."""
    import threading

    from harness.traffic import send
    from harness.traffic.exchange import HttpRequest

    options = send.SendOptions(auth=AuthOptions(scheme="ntlm", user=NTLM_USER,
                                                password=Secret(PASSWORD)))
    url = f"{ntlm_front}/PushNotificationMobile.asmx/GetTokenDevice?id=3"
    request = HttpRequest("GET", url, (("Host", url.split("/")[2]),))
    statuses: list[int] = []
    with send.client(options) as http:
        threads = [threading.Thread(target=lambda: statuses.extend(
            send.send(http, request, options).status for _ in range(3))) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses == [200] * 18


def test_mock_records_through_an_ntlm_front(ntlm_front: str, tmp_path: Path) -> None:
    """``mock --fallback URL --record FILE`` with the deployment's credentials: an unrecorded
    call is forwarded through the handshake, answered and recorded."""
    import signal

    import httpx

    record = tmp_path / "through.jsonl"
    mock = subprocess.Popen(
        [*HARNESS, "mock", "--port", "0", "--quiet", "--fallback", ntlm_front, "--record",
         str(record), "--user", NTLM_USER, "--ntlm"], cwd=tmp_path, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**_env(), "HARNESS_PASSWORD": PASSWORD})
    try:
        line = ""
        while " on http://" not in line:
            line = mock.stderr.readline()
            assert line, mock.stderr.read()
        url = line.split(" on ", 1)[1].split()[0]
        answer = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice?id=5", timeout=60)
    finally:
        mock.send_signal(signal.SIGINT)
        mock.communicate(timeout=120)
    assert answer.status_code == 200 and b"<string" in answer.content, answer.text
    assert b"GetTokenDevice" in record.read_bytes() and PASSWORD.encode() not in (
        record.read_bytes())


def test_mock_refuses_credentials_without_a_deployment(capsys, tmp_path: Path) -> None:
    line = refused(capsys, "mock", str(SAMPLE), "--user", "alice:x", "--port", "0")
    assert "need --fallback URL" in line


def test_shadow_mirrors_to_a_candidate_behind_ntlm(ntlm_front: str, auth_upstream: str,
                                                  tmp_path: Path) -> None:
    """``shadow --candidate URL`` with the candidate's credentials: each mirrored call goes
    through the handshake; the comparison passes."""
    import httpx

    from harness.shadow.process import ShadowProcess

    before = stats(ntlm_front)
    with ShadowProcess(auth_upstream, ntlm_front, tmp_path / "shadow.jsonl", "--user",
                       f"{NTLM_USER}:{PASSWORD}", "--ntlm", "--json",
                       str(tmp_path / "shadow.json")) as shadow:
        answers = [httpx.get(f"{shadow.url}/PushNotificationMobile.asmx/GetTokenDevice?id={i}",
                             timeout=60) for i in (1, 2)]
        code, stdout, stderr = shadow.stop()
    assert code == 0, stdout[-2000:] + stderr
    assert [a.status_code for a in answers] == [200, 200]
    assert json.loads((tmp_path / "shadow.json").read_text())["verdict"] == "passed"
    assert stats(ntlm_front)["passed"] - before["passed"] >= 2
