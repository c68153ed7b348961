"""WS-Security UsernameToken and Timestamp in every SOAP envelope the harness sends, as a WSE 3.0
client sends them (OASIS WSS 1.0 UsernameToken Profile)::

    <soap:Header>
      <wsse:Security soap:mustUnderstand="1" xmlns:wsse="...secext-1.0.xsd" xmlns:wsu="...">
        <wsu:Timestamp wsu:Id="Timestamp-...">
          <wsu:Created>2024-05-01T12:00:00.000Z</wsu:Created>
          <wsu:Expires>2024-05-01T12:05:00.000Z</wsu:Expires>
        </wsu:Timestamp>
        <wsse:UsernameToken wsu:Id="SecurityToken-...">
          <wsse:Username>alice</wsse:Username>
          <wsse:Password Type="...#PasswordDigest">Base64(SHA-1(nonce + created + password))</...>
          <wsse:Nonce EncodingType="...#Base64Binary">16 random bytes</wsse:Nonce>
          <wsu:Created>2024-05-01T12:00:00.000Z</wsu:Created>
        </wsse:UsernameToken>
      </wsse:Security>
    </soap:Header>

``stamp(body, token)`` adds it to a SOAP 1.1 or 1.2 envelope (a fresh nonce and time each
time; a Security header already there, e.g. a recorded one, is replaced) and leaves any other
body alone. It is added on the wire only (``harness.traffic.send``): what reports show is the
request without it, so the password never reaches one. The body is parsed with the hardened
parser; the header is spliced into the bytes as they are, so the rest of the envelope goes out
byte for byte as built (re-serialised through lxml only when it cannot be spliced).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from lxml import etree

from harness.contract.xmlsafe import local_name, parse_xml, utf8_by_its_start
from harness.errors import UsageError, XMLRejected
from harness.traffic.auth import Secret

WSSE_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
WSU_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
PROFILE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0"
BASE64_BINARY = ("http://docs.oasis-open.org/wss/2004/01/"
                 "oasis-200401-wss-soap-message-security-1.0#Base64Binary")
PASSWORD_TYPES = {"digest": f"{PROFILE}#PasswordDigest", "text": f"{PROFILE}#PasswordText"}
#: The SOAP envelope namespaces (1.1, 1.2) whose messages get the header.
ENVELOPES = ("http://schemas.xmlsoap.org/soap/envelope/", "http://www.w3.org/2003/05/soap-envelope")
#: WSE 3.0's default time-to-live of a message (its Timestamp's Expires).
DEFAULT_TTL = 300
ENV = "HARNESS_WSSE_PASSWORD"


@dataclass(frozen=True)
class UsernameToken:
    """``--wsse-user USER[:PASSWORD]`` and ``--wsse-password-type digest|text``."""

    user: str
    password: Secret = field(repr=False)
    password_type: str = "digest"
    ttl: int = DEFAULT_TTL

    def __post_init__(self) -> None:
        if self.password_type not in PASSWORD_TYPES:
            raise UsageError(f"--wsse-password-type {self.password_type}: use digest or text")
        if not self.user:
            raise UsageError("--wsse-user needs a user name")


def to_data(token: UsernameToken | None) -> dict[str, Any] | None:
    if token is None:
        return None
    return {"user": token.user, "password": token.password.reveal(),
            "password_type": token.password_type, "ttl": token.ttl}


def from_data(data: dict[str, Any] | None) -> UsernameToken | None:
    if not data:
        return None
    return UsernameToken(data["user"], Secret(data["password"]), data["password_type"],
                         data["ttl"])


def password_digest(nonce: bytes, created: str, password: str) -> str:
    """Base64(SHA-1(nonce + created + password)): the UsernameToken Profile's digest."""
    return base64.b64encode(hashlib.sha1(nonce + created.encode() + password.encode(),
                                         usedforsecurity=False).digest()).decode()


def security_header(token: UsernameToken, envelope_ns: str, now: datetime | None = None
                    ) -> etree._Element:
    """A fresh ``wsse:Security`` element (new nonce, new times) for an envelope of
    ``envelope_ns``."""
    now = now or datetime.now(UTC)
    created = _instant(now)
    nonce = secrets.token_bytes(16)
    password = token.password.reveal()
    security = etree.Element(f"{{{WSSE_NS}}}Security", nsmap={"wsse": WSSE_NS, "wsu": WSU_NS})
    security.set(f"{{{envelope_ns}}}mustUnderstand", "1")
    stamp = etree.SubElement(security, f"{{{WSU_NS}}}Timestamp")
    stamp.set(f"{{{WSU_NS}}}Id", f"Timestamp-{uuid.uuid4()}")
    etree.SubElement(stamp, f"{{{WSU_NS}}}Created").text = created
    etree.SubElement(stamp, f"{{{WSU_NS}}}Expires").text = _instant(
        now + timedelta(seconds=token.ttl))
    user = etree.SubElement(security, f"{{{WSSE_NS}}}UsernameToken")
    user.set(f"{{{WSU_NS}}}Id", f"SecurityToken-{uuid.uuid4()}")
    etree.SubElement(user, f"{{{WSSE_NS}}}Username").text = token.user
    secret = etree.SubElement(user, f"{{{WSSE_NS}}}Password",
                              Type=PASSWORD_TYPES[token.password_type])
    secret.text = (password_digest(nonce, created, password) if token.password_type == "digest"
                   else password)
    etree.SubElement(user, f"{{{WSSE_NS}}}Nonce", EncodingType=BASE64_BINARY).text = (
        base64.b64encode(nonce).decode())
    etree.SubElement(user, f"{{{WSU_NS}}}Created").text = created
    return security


def stamp(body: bytes, token: UsernameToken, now: datetime | None = None) -> bytes | None:
    """``body`` with a fresh Security header when it is a SOAP envelope, else None (sent as
    it is: GET/POST calls, a deliberately broken document)."""
    if not body or (b"Envelope" not in body and utf8_by_its_start(body)):
        return None
    try:
        root = parse_xml(body)
    except XMLRejected:
        return None
    namespace = etree.QName(root).namespace
    if local_name(root) != "Envelope" or namespace not in ENVELOPES:
        return None
    security = security_header(token, namespace, now)
    spliced = _spliced(body, root, security) if utf8_by_its_start(body) else None
    return spliced if spliced is not None else _reserialised(root, security, namespace)


_START = re.compile(rb"<(?:([A-Za-z_][\w.-]*):)?(Header|Body)\b[^>]*?(/?)>")


def _spliced(body: bytes, root: etree._Element, security: etree._Element) -> bytes | None:
    """The header spliced into the bytes: into the envelope's Header, or a new Header before
    its Body. None when the bytes do not read as the tree does (then the tree is rewritten)."""
    children = [c for c in root if isinstance(c.tag, str)]
    if not children or any(_is_security(h) for c in children if local_name(c) == "Header"
                           for h in c):
        return None
    first = children[0]
    match = next((m for m in _START.finditer(body)
                  if m[2].decode() == local_name(first)), None)
    if match is None or (match[1] or b"").decode() != (first.prefix or ""):
        return None
    xml = etree.tostring(security)
    prefix = match[1] + b":" if match[1] else b""
    if match[2] == b"Header":
        if match[3]:  # <soap:Header/>
            return (body[:match.start()] + match[0][:-2].rstrip() + b">" + xml
                    + b"</" + prefix + b"Header>" + body[match.end():])
        return body[:match.end()] + xml + body[match.end():]
    return (body[:match.start()] + b"<" + prefix + b"Header>" + xml + b"</" + prefix
            + b"Header>" + body[match.start():])


def _reserialised(root: etree._Element, security: etree._Element, namespace: str) -> bytes:
    header = next((c for c in root if isinstance(c.tag, str) and local_name(c) == "Header"),
                  None)
    if header is None:
        header = etree.Element(f"{{{namespace}}}Header")
        root.insert(0, header)
    for old in [h for h in header if _is_security(h)]:
        header.remove(old)
    header.insert(0, security)
    encoding = root.getroottree().docinfo.encoding or "utf-8"
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding=encoding)


def _is_security(element: Any) -> bool:
    return isinstance(element.tag, str) and local_name(element) == "Security" and (
        "wss" in (etree.QName(element).namespace or ""))


def _instant(moment: datetime) -> str:
    """2024-05-01T12:00:00.123Z, as WSE 3.0 writes its times."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{moment.microsecond // 1000:03d}Z"


# ----------------------------------------------------------------------- refusals

#: The WSS 1.0 fault codes (12: Error Handling) and WSE's / other stacks' names for a
#: refused token: a fault carrying one of them is the target refusing the credentials.
REFUSAL_CODES = ("FailedAuthentication", "InvalidSecurityToken", "InvalidSecurity",
                 "FailedCheck", "SecurityTokenUnavailable", "MessageExpired",
                 "UnsupportedSecurityToken", "AuthenticationFailure")


def refusal(origin: str, status: int, body: bytes, token: UsernameToken) -> str | None:
    """The one line a run stops with when a SOAP answer is the target refusing the
    UsernameToken (HTTP 401, or a fault with a WS-Security code), naming its fault; None for
    any other answer."""
    if status < 400 or not body:
        return None
    try:
        root = parse_xml(body)
    except XMLRejected:
        root = None
    codes, reason = _fault(root) if root is not None else ([], "")
    refused = status == 401 or any(c.rpartition(":")[2] in REFUSAL_CODES for c in codes)
    if not refused:
        return None
    fault = (f"fault {'/'.join(codes)}" if codes else "no SOAP fault") + (
        f" {reason!r}" if reason else "")
    kind = "PasswordDigest" if token.password_type == "digest" else "PasswordText"
    return (f"{origin} refused the WS-Security UsernameToken ({kind}) of --wsse-user: HTTP "
            f"{status}, {fault}; check the user name and the password")


def _fault(root: etree._Element) -> tuple[list[str], str]:
    """The codes (code, then subcodes) and reason of a SOAP 1.1 or 1.2 fault in ``root``."""
    fault = next((e for e in root.iter() if isinstance(e.tag, str)
                  and local_name(e) == "Fault"), None)
    if fault is None:
        return [], ""
    codes = [" ".join((e.text or "").split()) for e in fault.iter()
             if isinstance(e.tag, str) and local_name(e) in ("faultcode", "Value")]
    reasons = [e for e in fault.iter() if isinstance(e.tag, str)
               and local_name(e) in ("faultstring", "Text")]
    reason = " ".join((reasons[0].text or "").split()) if reasons else ""
    return [c for c in codes if c], reason[:200]
