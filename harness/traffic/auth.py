"""Authentication on the sending path: who the harness is to the target, and how it proves it.

``AuthOptions`` is what the user chose (``harness.commands.options`` gives the flags, as curl
spells them: ``--user``, ``--basic``/``--digest``/``--ntlm``/``--negotiate``, ``--cert``,
``--key``, ``--pass``; ``--wsse-user``; ``--login-url``): it travels inside ``SendOptions`` to
every sending process (replay's workers, load's child and its workers). Passwords are
``Secret``: never in a repr, a report or a command line.

HTTP authentication runs as an httpx ``Auth`` flow (httpx's own Basic and Digest; ``SpnegoAuth``
on pyspnego for NTLM and Negotiate), driven leg by leg by ``Legs`` so that any transport can
carry it (httpx in ``send``, geventhttpclient in ``load``), every 401 body read within the size
cap. NTLM and Negotiate authenticate a *connection*, not a request: ``AuthOptions.per_connection``
tells the transport to run each handshake, and the requests after it, over one connection of
its own (``send.Sender`` keeps a pool of one-connection clients).

Client certificates (``--cert``/``--key``, PEM or PKCS#12) go into the TLS context
(``load_client_certificate``). ``refusal`` turns a final 401 into the one line a run stops with
(exit 2), naming the schemes the target asked for.

Example::

    auth = AuthOptions(scheme="ntlm", user="CORP\\\\alice", password=Secret("s3cret"))
    with Sender(SendOptions(auth=auth)) as sender:
        sender.send(request)  # the handshake, on the connection the request then goes over
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness.errors import AuthenticationFailed, UsageError

#: The HTTP schemes, as the flags name them.
SCHEMES = ("basic", "digest", "ntlm", "negotiate")
#: How each scheme is spelt in WWW-Authenticate / Authorization.
SCHEME_NAMES = {"basic": "Basic", "digest": "Digest", "ntlm": "NTLM", "negotiate": "Negotiate"}
#: Client certificate formats (curl's --cert-type).
CERT_TYPES = ("PEM", "P12")
#: Environment variables a password is read from when the flag gives none.
PASSWORD_ENV = "HARNESS_PASSWORD"
CERT_PASSWORD_ENV = "HARNESS_CERT_PASSWORD"


class Secret:
    """A password: its value is ``reveal()``-ed only where it goes on the wire; its repr and
    str never show it (a traceback, a log line or a dataclass repr)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and secrets.compare_digest(
            self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(hashlib.sha256(self._value.encode()).digest())

    def __reduce__(self):  # picklable into replay's worker processes
        return (Secret, (self._value,))


@dataclass(frozen=True)
class AuthOptions:
    """How the harness authenticates (see the module docstring); the default: not at all."""

    #: One of SCHEMES, or None (no HTTP authentication).
    scheme: str | None = None
    user: str | None = None
    password: Secret | None = field(default=None, repr=False)
    #: Client certificate (PEM file, or PKCS#12 with cert_type "P12"), its key (PEM; inside
    #: the PKCS#12 file for P12) and the password of either.
    cert: str | None = None
    key: str | None = None
    cert_type: str = "PEM"
    cert_password: Secret | None = field(default=None, repr=False)
    #: WS-Security UsernameToken (``harness.traffic.wsse``): None for none.
    wsse: Any = None
    #: The cookie login (``harness.traffic.login``): None for none.
    login: Any = None

    def __post_init__(self) -> None:
        if self.scheme is not None and self.scheme not in SCHEMES:
            raise UsageError(f"unknown authentication scheme {self.scheme!r} "
                             f"(one of {', '.join(SCHEMES)})")
        if self.scheme is not None and self.user is None:
            raise UsageError(f"--{self.scheme} needs --user USER[:PASSWORD]")
        if self.cert_type not in CERT_TYPES:
            raise UsageError(f"--cert-type {self.cert_type}: use PEM or P12")
        for flag, path in (("--cert", self.cert), ("--key", self.key)):
            if path is not None and not Path(path).is_file():
                raise UsageError(f"{flag} {path}: no such file")
        if self.key is not None and self.cert is None:
            raise UsageError("--key needs --cert (the certificate the key belongs to)")

    @property
    def per_connection(self) -> bool:
        """NTLM and Negotiate authenticate the connection; Digest keeps a nonce count per
        client: each handshake, and the requests after it, keep to one connection."""
        return self.scheme in ("ntlm", "negotiate", "digest")

    def http_auth(self) -> httpx.Auth | None:
        """A new httpx Auth for one client (one connection when ``per_connection``)."""
        if self.scheme is None:
            return None
        password = self.password.reveal() if self.password is not None else ""
        if self.scheme == "basic":
            return httpx.BasicAuth(self.user or "", password)
        if self.scheme == "digest":
            return httpx.DigestAuth(self.user or "", password)
        return SpnegoAuth(self.user, self.password, self.scheme)

    def to_data(self) -> dict[str, Any]:
        """As plain data (JSON) for load's child and workers; passwords in clear: hand it
        over only through a private channel (the environment, a pipe), never a command line."""
        from harness.traffic import login, wsse

        return {"scheme": self.scheme, "user": self.user, "password": _reveal(self.password),
                "cert": self.cert, "key": self.key, "cert_type": self.cert_type,
                "cert_password": _reveal(self.cert_password),
                "wsse": wsse.to_data(self.wsse), "login": login.to_data(self.login)}

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> AuthOptions:
        from harness.traffic import login, wsse

        if not data:
            return cls()
        return cls(scheme=data.get("scheme"), user=data.get("user"),
                   password=_secret(data.get("password")), cert=data.get("cert"),
                   key=data.get("key"), cert_type=data.get("cert_type") or "PEM",
                   cert_password=_secret(data.get("cert_password")),
                   wsse=wsse.from_data(data.get("wsse")), login=login.from_data(data.get("login")))


def _reveal(secret: Secret | None) -> str | None:
    return secret.reveal() if secret is not None else None


def _secret(text: str | None) -> Secret | None:
    return Secret(text) if text is not None else None


# ----------------------------------------------------------------- NTLM and Negotiate


class SpnegoAuth(httpx.Auth):
    """NTLM or Negotiate (SPNEGO: Kerberos where a ticket and python-gssapi exist, else NTLM)
    through pyspnego. A request goes first as it is: on a connection already authenticated it
    is answered; on a 401 offering the scheme, the handshake runs on the same connection.

    ``ntlm`` answers a challenge of NTLM, or of Negotiate (whose acceptors take a bare NTLM
    token); ``negotiate`` answers Negotiate, else falls back to NTLM when that is all the
    target offers. Without a user name (``--user :``) the logged-in identity is used: a
    Kerberos ticket (kinit), or pyspnego's NTLM_USER_FILE."""

    def __init__(self, user: str | None, password: Secret | None, scheme: str) -> None:
        self.user = user or None
        self.password = password
        self.scheme = scheme
        #: Set by the transport for an https target: the TLS channel binding (IIS Extended
        #: Protection checks it).
        self.channel_bindings: Any = None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        response = yield request
        chosen = self._choose(offered_schemes(response.headers.get_list("www-authenticate")))
        if response.status_code != 401 or chosen is None:
            return
        name, protocol = chosen
        context = self._context(protocol, request.url.host)
        out = _step(context, None, name)
        while out is not None:
            request.headers["Authorization"] = f"{name} {base64.b64encode(out).decode()}"
            response = yield request
            token = challenge_token(response.headers.get_list("www-authenticate"), name)
            if response.status_code != 401 or token is None or context.complete:
                return  # answered (a final mutual-auth token needs no answer), or refused
            out = _step(context, token, name)

    def _choose(self, offered: list[str]) -> tuple[str, str] | None:
        """(the scheme name to answer, pyspnego's protocol), or None when none is offered."""
        low = {s.lower(): s for s in offered}
        if self.scheme == "negotiate":
            if "negotiate" in low:
                return "Negotiate", "negotiate"
            return ("NTLM", "ntlm") if "ntlm" in low else None
        if "ntlm" in low:
            return "NTLM", "ntlm"
        return ("Negotiate", "ntlm") if "negotiate" in low else None

    def _context(self, protocol: str, host: str) -> Any:
        import spnego

        password = self.password.reveal() if self.password is not None else None
        try:
            return spnego.client(self.user, password, hostname=host, service="HTTP",
                                 protocol=protocol, channel_bindings=self.channel_bindings)
        except Exception as exc:  # pyspnego's errors, and gssapi's beneath them
            raise AuthenticationFailed(f"{SCHEME_NAMES[self.scheme]}: cannot start the "
                                       f"handshake: {_one_line(exc)}") from None


def _step(context: Any, token: bytes | None, name: str) -> bytes | None:
    try:
        return context.step(token)
    except Exception as exc:
        raise AuthenticationFailed(f"the {name} handshake failed: {_one_line(exc)}") from None


def channel_bindings(certificate: bytes | None) -> Any:
    """The ``tls-server-end-point`` channel binding (RFC 5929) of the server's certificate
    (DER), for NTLM/Negotiate over TLS; None without one."""
    if not certificate:
        return None
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from spnego.channel_bindings import GssChannelBindings

    cert = x509.load_der_x509_certificate(certificate)
    algorithm = cert.signature_hash_algorithm
    if algorithm is None or isinstance(algorithm, (hashes.MD5, hashes.SHA1)):
        algorithm = hashes.SHA256()
    digest = hashes.Hash(algorithm)
    digest.update(certificate)
    return GssChannelBindings(application_data=b"tls-server-end-point:" + digest.finalize())


# ------------------------------------------------------------- challenges and refusals

#: A scheme name in WWW-Authenticate: a token at the start of a challenge, not a parameter.
_SCHEME = re.compile(r"(?:^|,)\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?=\s+[^\s=,]|\s*(?:,|$))")


def offered_schemes(values: Iterable[str]) -> list[str]:
    """The scheme names of WWW-Authenticate header values, in order, once each:
    ``['Negotiate', 'NTLM']`` of ``Negotiate`` and ``NTLM``, ``['Digest']`` of
    ``Digest realm="x", nonce="y", qop="auth"``."""
    found: list[str] = []
    for value in values:
        for match in _SCHEME.finditer(_without_quoted(value)):
            name = match[1]
            if name.lower() not in (f.lower() for f in found):
                found.append(name)
    return found


def challenge_token(values: Iterable[str], scheme: str) -> bytes | None:
    """The base64 token of ``scheme``'s challenge (``NTLM TlRMTVNT...``), or None."""
    for value in values:
        name, _, token = value.strip().partition(" ")
        if name.lower() == scheme.lower() and token.strip():
            try:
                return base64.b64decode(token.strip(), validate=True)
            except ValueError:
                return None
    return None


def _without_quoted(value: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', value)


def refusal(origin: str, status: int, www_authenticate: list[str], auth: AuthOptions
            ) -> str | None:
    """The one line a run stops with when the target refuses it (HTTP 401), naming the
    schemes it asked for; None for any other answer."""
    if status != 401:
        return None
    offered = offered_schemes(www_authenticate)
    asked = ", ".join(offered) or "no scheme (no WWW-Authenticate)"
    if auth.scheme is None:
        hint = _flags_for(offered)
        return (f"{origin} asks for authentication: HTTP 401, WWW-Authenticate {asked}"
                + (f"; give --user USER[:PASSWORD] {hint}" if hint else ""))
    mine = SCHEME_NAMES[auth.scheme]
    usable = {mine.lower()} | ({"ntlm", "negotiate"} if auth.scheme in ("ntlm", "negotiate")
                               else set())
    if offered and not usable & {s.lower() for s in offered}:
        hint = _flags_for(offered)
        return (f"{origin} asks for {asked} authentication, not {mine}: HTTP 401"
                + (f"; use {hint}" if hint else ""))
    return (f"{origin} refused the {mine} credentials of --user: HTTP 401, WWW-Authenticate "
            f"{asked}; check the user name" + (" (DOMAIN\\user)" if auth.scheme == "ntlm"
                                               else "") + " and the password")


def _flags_for(offered: list[str]) -> str:
    flags = [f"--{s.lower()}" for s in offered if s.lower() in SCHEMES]
    return " or ".join(dict.fromkeys(flags))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# ------------------------------------------------------------------------ the legs


class Legs:
    """One request's authentication, leg by leg, over any transport: ``headers`` to send
    with the current leg; ``answered(status, headers)`` is True when another leg is due (the
    target challenged: read the 401's body, then send the request again with the new
    ``headers``). Drives an httpx Auth flow with httpx's public Request/Response types."""

    def __init__(self, auth: httpx.Auth | None, method: str, url: str) -> None:
        self._flow = None
        self._request = httpx.Request(method, url)
        if auth is not None:
            self._flow = auth.sync_auth_flow(self._request)
            self._request = next(self._flow)

    def headers(self) -> list[tuple[str, str]]:
        value = self._request.headers.get("authorization")
        return [("Authorization", value)] if value is not None else []

    def answered(self, status: int, headers: Iterable[tuple[str, str]]) -> bool:
        if self._flow is None:
            return False
        response = httpx.Response(status, headers=list(headers), request=self._request)
        try:
            self._request = self._flow.send(response)
        except StopIteration:
            self._flow = None
            return False
        return True


# ------------------------------------------------------------------ client certificates


def load_client_certificate(context: ssl.SSLContext, auth: AuthOptions) -> None:
    """Put ``auth``'s client certificate into ``context`` (UsageError, one line, when it
    cannot be read or its key decrypted)."""
    if auth.cert is None:
        return
    password = _reveal(auth.cert_password)
    if auth.cert_type == "P12":
        with _pkcs12_as_pem(auth.cert, password) as (path, key_password):
            context.load_cert_chain(path, password=key_password)
        return

    def ask() -> str:
        if password is None:
            raise UsageError(f"the key of --cert {auth.cert} is encrypted: give its password "
                             f"(--pass, or {CERT_PASSWORD_ENV})")
        return password

    try:
        context.load_cert_chain(auth.cert, auth.key, password=ask)
    except ssl.SSLError as exc:
        reason = "wrong password (--pass)" if "decrypt" in str(exc).lower() else _one_line(exc)
        raise UsageError(f"--cert {auth.cert}"
                         + (f" --key {auth.key}" if auth.key else "")
                         + f": not a usable PEM certificate and key ({reason})") from None


@contextlib.contextmanager
def _pkcs12_as_pem(path: str, password: str | None):
    """The PKCS#12 file as a PEM file ssl can load: certificate, chain and the key encrypted
    under a one-time password, in a private temporary file deleted once loaded (the key never
    reaches the disk in clear)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        key, cert, chain = pkcs12.load_key_and_certificates(
            Path(path).read_bytes(), password.encode() if password is not None else None)
    except (ValueError, TypeError) as exc:
        reason = ("it is encrypted: give its password (--pass, or "
                  f"{CERT_PASSWORD_ENV})" if password is None else
                  f"wrong password, or not PKCS#12 ({_one_line(exc)})")
        raise UsageError(f"--cert {path}: {reason}") from None
    if key is None or cert is None:
        raise UsageError(f"--cert {path}: the PKCS#12 file holds no certificate and key")
    one_time = secrets.token_urlsafe(24)
    pem = cert.public_bytes(serialization.Encoding.PEM) + b"".join(
        c.public_bytes(serialization.Encoding.PEM) for c in chain or ()) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode()))
    handle, temp = tempfile.mkstemp(prefix="harness-cert-", suffix=".pem")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(pem)
        yield temp, one_time
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
