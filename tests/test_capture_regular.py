"""``harness capture --mode regular``: the real command as the HTTP(S) proxy a phone points at,
real httpx clients configured with ``proxy=``, the reference on loopback behind it. Plain HTTP,
and HTTPS decrypted with mitmproxy's CA as docs/capture.md's "HTTPS from a phone" promises."""

from __future__ import annotations

import datetime
import html
import ipaddress
import json
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit

import httpx
import pytest

from harness.capture.process import CaptureProcess, run_harness
from harness.capture.proxy import parse_listen
from harness.cli import build_parser
from harness.contract.bindings import Binding, build_request, classify
from harness.contract.model import Contract, Operation, reference_result, sample_arguments
from harness.reference.server import running
from harness.traffic.recording import read_exchanges, read_header
from harness.traffic.redaction import is_pseudonym

REGULAR = ("--mode", "regular")


@dataclass(frozen=True)
class Call:
    operation: Operation
    binding: Binding
    arguments: dict[str, str]
    response: httpx.Response


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def confdir(tmp_path) -> Path:
    """A mitmproxy confdir of this test: its CA never lands in the user's ~/.mitmproxy."""
    return tmp_path / "mitmproxy"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("tls"))


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (as a staging server has): its
    certificate and key files in ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "harness test reference")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public),
                           critical=False)
            .sign(key, hashes.SHA256()))
    certfile, keyfile = folder / "reference-cert.pem", folder / "reference-key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return certfile, keyfile


@pytest.fixture(scope="module")
def https_reference(contract, tls_files) -> Iterator[str]:
    certfile, keyfile = tls_files
    with running(contract, ssl_certfile=str(certfile), ssl_keyfile=str(keyfile)) as url:
        yield url


# -- helpers -----------------------------------------------------------------------------------


def _operations(contract: Contract) -> list[Operation]:
    """A couple of operations: sensitive parameters, a sensitive result, nothing sensitive."""
    ops = contract.operations
    picks = [next(o for o in ops if any(p.sensitive for p in o.parameters)),
             next(o for o in ops if o.result_sensitive),
             next(o for o in ops if not o.result_sensitive
                  and not any(p.sensitive for p in o.parameters))]
    return list(dict.fromkeys(picks))


def _arguments(op: Operation) -> dict[str, str]:
    """Non-ASCII, XML-special values; the sensitive ones unique to their parameter."""
    return {k: f"{v}·{op.name}·{k}" if op.parameter(k).sensitive else v
            for k, v in sample_arguments(op, 1).items()}


def _call(client: httpx.Client, contract: Contract, base: str, ops: list[Operation]) -> list[Call]:
    """Every binding of ``ops`` at ``base``, sent by ``client`` exactly as the spec builds it."""
    calls = []
    for op in ops:
        args = _arguments(op)
        for binding in Binding:
            request = build_request(contract, op, args, binding, base)
            response = client.request(request.method, request.url, headers=list(request.headers),
                                      content=request.body or None)
            calls.append(Call(op, binding, args, response))
    return calls


def _check_recorded(contract: Contract, out: Path, calls: list[Call], base: str) -> None:
    """The recording holds ``calls`` in order: URL, classification, status, bodies, redaction."""
    exchanges = list(read_exchanges([out]))
    assert len(exchanges) == len(calls)
    for call, exchange in zip(calls, exchanges, strict=True):
        op = call.operation
        assert exchange.request.url.startswith(f"{base}{op.endpoint}")
        assert (exchange.meta["binding"], exchange.meta["operation"]) == (call.binding.value,
                                                                         op.name)
        assert exchange.response is not None
        assert exchange.response.status == call.response.status_code == 200
        again = classify(contract, exchange.request)  # what lint and replay will read
        assert (again.binding, again.operation) == (call.binding, op)
        for name, value in again.args.items():
            if op.parameter(name).sensitive:
                assert is_pseudonym(value)
            else:
                assert value == call.arguments[name]
        assert dict(exchange.meta["arguments"]) == again.args
        if not op.result_sensitive:
            assert exchange.response.body == call.response.content
    _check_secrets_absent(out, calls)
    assert read_header(out)["redacted"] is True


def _check_secrets_absent(out: Path, calls: list[Call]) -> None:
    raw = out.read_bytes()
    secrets = set()
    for call in calls:
        op = call.operation
        secrets |= {v for k, v in call.arguments.items() if op.parameter(k).sensitive}
        if op.result_sensitive:
            secrets.add(reference_result(op, call.arguments))
    assert secrets
    for secret in secrets:
        forms = {secret, html.escape(secret, quote=False), quote_plus(secret), quote(secret),
                 json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        for form in forms:
            assert form.encode() not in raw, form


def _get(client: httpx.Client, base: str, op: Operation) -> httpx.Response:
    return client.get(f"{base}{op.endpoint}/{op.name}", params=_arguments(op))


def _check_untrusted(base: str, op: Operation, verify: ssl.SSLContext,
                     proxy: str | None = None) -> None:
    with httpx.Client(proxy=proxy, verify=verify, trust_env=False) as client, \
            pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(client, base, op)


def _other_host(url: str) -> str:
    """The same server named by another host name."""
    return url.replace("127.0.0.1", "localhost", 1)


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port``, from the kernel's own tables."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(address)
                # The kernel prints each 32-bit word in host (little-endian) order.
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(str(ipaddress.ip_address(words)))
    return found


# -- plain HTTP --------------------------------------------------------------------------------


def test_plain_http_every_binding_recorded_classified_redacted(contract, reference_url,
                                                               confdir, tmp_path):
    out = tmp_path / "regular.jsonl"
    with CaptureProcess(reference_url, out, *REGULAR, "--confdir", str(confdir)) as capture:
        with httpx.Client(proxy=capture.url, trust_env=False, timeout=30) as client:
            calls = _call(client, contract, reference_url, _operations(contract))
        code, stdout, _ = capture.stop()
    assert code == 0
    _check_recorded(contract, out, calls, reference_url)
    header = read_header(out)
    assert header["mode"] == "regular" and header["upstream"] == reference_url
    assert f"captured {len(calls)} exchange(s)" in stdout
    assert "unclassified: 0, foreign: 0, errors: 0, foreign left out: 0" in stdout


@pytest.mark.parametrize("keep", [False, True], ids=["left-out", "keep-foreign"])
def test_upstream_restricts_what_is_recorded(contract, reference_url, confdir, tmp_path, keep):
    """For the service: an .asmx endpoint on the --upstream host AND port. Another host name,
    another port of the same host, a non-.asmx path: foreign."""
    op = next(o for o in contract.operations if any(p.sensitive for p in o.parameters))
    out = tmp_path / "upstream.jsonl"
    extra = ("--keep-foreign",) if keep else ()
    with running(contract) as other_service, \
            CaptureProcess(reference_url, out, *REGULAR, "--confdir", str(confdir),
                           *extra) as capture:
        with httpx.Client(proxy=capture.url, trust_env=False, timeout=30) as client:
            answers = [_get(client, reference_url, op),
                       _get(client, _other_host(reference_url), op),
                       _get(client, other_service, op),
                       client.get(f"{reference_url}/robots.txt")]
        code, stdout, _ = capture.stop()
    assert code == 0
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]  # all passed through
    exchanges = list(read_exchanges([out]))
    assert exchanges[0].meta["operation"] == op.name
    assert urlsplit(exchanges[0].request.url).netloc == urlsplit(reference_url).netloc
    if keep:
        foreign = exchanges[1:]
        assert [e.meta for e in foreign] == [{"foreign": True}] * 3
        assert [urlsplit(e.request.url).netloc for e in foreign] == [
            urlsplit(u).netloc for u in (_other_host(reference_url), other_service,
                                         reference_url)]
        assert foreign[2].request.url.endswith("/robots.txt")
        assert "foreign left out: 0" in stdout
    else:
        assert len(exchanges) == 1
        assert "foreign left out: 3" in stdout
    # Foreign traffic kept is redacted too: the sensitive values sent to the others are gone.
    _check_secrets_absent(out, [Call(op, Binding.HTTP_GET, _arguments(op), answers[0])])


def test_without_upstream_every_host_is_the_service(contract, reference_url, confdir,
                                                    tmp_path):
    op = next(o for o in contract.operations if not o.result_sensitive)
    out = tmp_path / "any-host.jsonl"
    with running(contract) as other_service, \
            CaptureProcess(None, out, *REGULAR, "--confdir", str(confdir)) as capture:
        with httpx.Client(proxy=capture.url, trust_env=False, timeout=30) as client:
            bases = [reference_url, _other_host(reference_url), other_service]
            for base in bases:
                assert _get(client, base, op).status_code == 200
            client.get(f"{reference_url}/robots.txt")
        _, stdout, _ = capture.stop()
    exchanges = list(read_exchanges([out]))
    assert [urlsplit(e.request.url).netloc for e in exchanges] == [urlsplit(b).netloc
                                                                   for b in bases]
    assert all(e.meta["operation"] == op.name for e in exchanges)
    assert read_header(out)["upstream"] is None
    assert "foreign left out: 1" in stdout


def test_regular_mode_listens_on_loopback_by_default(tmp_path, confdir):
    args = build_parser().parse_args(["capture", *REGULAR, "--out", str(tmp_path / "r.jsonl")])
    assert parse_listen(args.listen) == ("127.0.0.1", 8080)
    # A bare port keeps the loopback host; the kernel says where the real proxy listens.
    with CaptureProcess(None, tmp_path / "r.jsonl", *REGULAR, "--listen", "0",
                        "--confdir", str(confdir)) as capture:
        where = urlsplit(capture.url)
        assert where.hostname == "127.0.0.1"
        if Path("/proc/net/tcp").exists():
            assert _listening_addresses(where.port) == {"127.0.0.1"}


# -- HTTPS through mitmproxy's CA --------------------------------------------------------------


def test_https_through_mitmproxy_ca(contract, https_reference, tls_files, confdir, tmp_path):
    out = tmp_path / "https.jsonl"
    reference_cert = str(tls_files[0])
    with CaptureProcess(https_reference, out, *REGULAR, "--insecure",
                        "--confdir", str(confdir)) as capture:
        ca_file = confdir / "mitmproxy-ca-cert.pem"  # what a phone installs
        assert ca_file.is_file()
        trust_mitmproxy = ssl.create_default_context(cafile=str(ca_file))
        with httpx.Client(proxy=capture.url, verify=trust_mitmproxy, trust_env=False,
                          timeout=30) as client:
            calls = _call(client, contract, https_reference, _operations(contract))
            ssl_object = calls[0].response.extensions["network_stream"].get_extra_info(
                "ssl_object")
            issuer = dict(pair[0] for pair in ssl_object.getpeercert()["issuer"])
        # The chain really is verified: trusting only the reference's own certificate, the
        # same call through the proxy fails, and mitmproxy's CA vouches for nobody directly.
        trust_reference = ssl.create_default_context(cafile=reference_cert)
        op = calls[0].operation
        _check_untrusted(https_reference, op, trust_reference, proxy=capture.url)
        _check_untrusted(https_reference, op, trust_mitmproxy)
        with httpx.Client(verify=trust_reference, trust_env=False) as direct:
            assert _get(direct, https_reference, op).status_code == 200
        code, stdout, _ = capture.stop()
    assert code == 0
    assert issuer["commonName"] == "mitmproxy"
    assert https_reference.startswith("https://")
    _check_recorded(contract, out, calls, https_reference)
    assert f"captured {len(calls)} exchange(s)" in stdout


def test_https_upstream_is_verified_unless_insecure(contract, https_reference, confdir,
                                                   tmp_path):
    out = tmp_path / "verified.jsonl"
    op = next(o for o in contract.operations if not o.result_sensitive)
    with CaptureProcess(https_reference, out, *REGULAR, "--confdir", str(confdir)) as capture:
        trust = ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem"))
        with httpx.Client(proxy=capture.url, verify=trust, trust_env=False) as client:
            answer = _get(client, https_reference, op)
        _, stdout, _ = capture.stop()
    assert answer.status_code == 502  # mitmproxy refused the self-signed staging certificate
    (exchange,) = read_exchanges([out])
    assert exchange.response is None and "certificate" in exchange.meta["error"].lower()
    assert exchange.meta["operation"] == op.name
    assert exchange.request.url.startswith(f"{https_reference}{op.endpoint}")
    assert "errors: 1" in stdout


def test_confdir_that_cannot_hold_the_ca_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = run_harness("capture", *REGULAR, "--out", tmp_path / "r.jsonl", "--listen",
                       "127.0.0.1:0", "--confdir", blocker / "mitmproxy", check=False)
    assert done.returncode == 2
    assert "mitmproxy's CA" in done.stderr and "listening" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.jsonl").exists()  # refused before the recording was opened
