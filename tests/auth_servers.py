"""Protected fronts of the service for the authentication tests, as session fixtures.

Each front (tests/services/auth_front/front.py; the WS-Security one is Node's:
tests/services/wsse_front/front.js) runs in its own process on a free loopback port in front of
the upstream: the real ASMX (HARNESS_ASMX_URL) where there is one, else the embedded reference.
Its user is ``alice`` / PASSWORD; NTLM's is ``SCHOOL\\alice`` (pyspnego's acceptor matches its
user file by domain and user). ``pki`` makes a CA, a server certificate for 127.0.0.1, a client
certificate (PEM with an encrypted key, and PKCS#12), and a client certificate of another CA.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from stacks import ROOT, StackDidNotStart, node_soap_env, node_soap_missing, served

FRONT = ROOT / "tests" / "services" / "auth_front" / "front.py"
WSSE_FRONT = ROOT / "tests" / "services" / "wsse_front" / "front.js"
USER, PASSWORD, DOMAIN = "alice", "Tr0ub4dor&3", "SCHOOL"
NTLM_USER = f"{DOMAIN}\\{USER}"
CERT_PASSWORD = "p12-secret"


def stats(url: str) -> dict[str, int]:
    """What a front counted: connections, handshakes, refused, passed."""
    with urllib.request.urlopen(f"{url}/_front/stats", timeout=10) as answer:
        return json.load(answer)


@pytest.fixture(scope="session")
def auth_upstream(request: pytest.FixtureRequest) -> str:
    """The deployment behind the fronts: the real ASMX when the interop lane has one."""
    url = os.environ.get("HARNESS_ASMX_URL", "").strip().rstrip("/")
    return url or request.getfixturevalue("reference_url")


def _front(tmp: Path, scheme: str, upstream: str, *extra: str) -> Iterator[str]:
    users = tmp / "ntlm-users"
    users.write_text(f"{DOMAIN}:{USER}:{PASSWORD}\n", encoding="utf-8")
    env = {**os.environ, "FRONT_USER": USER, "FRONT_PASSWORD": PASSWORD,
           "NTLM_USER_FILE": str(users)}
    try:
        with served([sys.executable, str(FRONT), "--scheme", scheme, "--upstream", upstream,
                     *extra], tmp, env=env) as url:
            yield url
    except StackDidNotStart as exc:
        pytest.fail(f"the {scheme} front did not start: {exc}")


@pytest.fixture(scope="session")
def basic_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("basic"), "basic", auth_upstream)


@pytest.fixture(scope="session")
def digest_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("digest"), "digest", auth_upstream)


@pytest.fixture(scope="session")
def ntlm_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("ntlm"), "ntlm", auth_upstream)


@pytest.fixture(scope="session")
def negotiate_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("negotiate"), "negotiate", auth_upstream)


@pytest.fixture(scope="session")
def cookie_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("cookie"), "cookie", auth_upstream)


@pytest.fixture(scope="session")
def mtls_front(tmp_path_factory, auth_upstream: str, pki: Pki) -> Iterator[str]:
    yield from _front(tmp_path_factory.mktemp("mtls"), "none", auth_upstream,
                      "--tls", str(pki.server_cert), str(pki.server_key),
                      "--client-ca", str(pki.ca))


@pytest.fixture(scope="session")
def wsse_front(tmp_path_factory, auth_upstream: str) -> Iterator[str]:
    """WSE 3.0's part played by Node's soap package: every SOAP envelope must carry a
    UsernameToken whose PasswordDigest soap.passwordDigest verifies (fresh time, new nonce);
    the Security header is taken off and the envelope passed on."""
    reason = node_soap_missing()
    if reason:
        pytest.skip(reason)
    env = {**node_soap_env(), "UPSTREAM": auth_upstream, "WSSE_USER": USER,
           "WSSE_PASSWORD": PASSWORD}
    try:
        with served(["node", str(WSSE_FRONT), "0"], tmp_path_factory.mktemp("wsse"),
                    env=env) as url:
            yield url
    except StackDidNotStart as exc:
        pytest.fail(f"the WS-Security front did not start: {exc}")


# --------------------------------------------------------------------------- certificates


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path  # encrypted with CERT_PASSWORD
    client_p12: Path  # with CERT_PASSWORD
    rogue_cert: Path  # a client certificate (key inside) of a CA the server does not trust
    client_bundle: Path  # the client certificate and its unencrypted key (capture's --cert)


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = tmp_path_factory.mktemp("pki")
    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def issue(subject: str, issuer=None, *, ca=False, server=False):
        key = ec.generate_private_key(ec.SECP256R1())
        signer_name, signer_key = issuer or (name(subject), key)
        builder = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(signer_name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                                  critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       signer_key.public_key()), critical=False))
        if ca:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        if not ca:
            builder = builder.add_extension(x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False)
        return key, builder.sign(signer_key, hashes.SHA256())

    def pem(cert) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(key, password: str | None = None) -> bytes:
        crypt = (serialization.BestAvailableEncryption(password.encode()) if password
                 else serialization.NoEncryption())
        return key.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.PKCS8, crypt)

    ca_key, ca = issue("harness test CA", ca=True)
    server_key, server = issue("127.0.0.1", (ca.subject, ca_key), server=True)
    client_key, client = issue("qa-runner", (ca.subject, ca_key))
    rogue_ca_key, rogue_ca = issue("another CA", ca=True)
    rogue_key, rogue = issue("intruder", (rogue_ca.subject, rogue_ca_key))
    files = {
        "ca.pem": pem(ca), "server.pem": pem(server), "server.key": key_pem(server_key),
        "client.pem": pem(client), "client.key": key_pem(client_key, CERT_PASSWORD),
        "client.p12": pkcs12.serialize_key_and_certificates(
            b"qa-runner", client_key, client, None,
            serialization.BestAvailableEncryption(CERT_PASSWORD.encode())),
        "rogue.pem": pem(rogue) + key_pem(rogue_key),
        "bundle.pem": pem(client) + key_pem(client_key),
    }
    for file, data in files.items():
        (folder / file).write_bytes(data)
    return Pki(*(folder / f for f in ("ca.pem", "server.pem", "server.key", "client.pem",
                                       "client.key", "client.p12", "rogue.pem",
                                       "bundle.pem")))
