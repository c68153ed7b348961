"""Service descriptions that keep clients on the proxy.

An ASMX service names its own address in what it describes: the WSDL's ``soap:address``,
``soap12:address`` and ``http:address`` locations, the disco document's ``contractRef`` and
``soap address``, the help page's test forms. It builds them from the Host header it received,
which in reverse mode is the upstream's, so a client that loads the WSDL through the proxy would
then call the upstream directly and nothing after the WSDL would be recorded. The proxy rewrites
those addresses, in what it delivers to the client, to the origin the client addressed:

- reverse mode: the proxy itself, as the client reached it (the name it asked for over TLS,
  else the address and port it connected to; ``https`` when it spoke TLS to the proxy);
- regular mode: the host the client asked the proxy for (its Host header and scheme), which is
  what the upstream names unless it sits behind a load balancer that names itself otherwise.

What is rewritten: every occurrence of the upstream's origin as it knows itself (the scheme and
Host header of the request it got, and its address) and of the origins the description's own
address elements name (read with the hardened parser), when followed by a path, a quote or the
end of the attribute: a byte-level replace of those exact origins, nothing else in the body
changes. The recording keeps what the upstream sent, with ``meta.addresses_rewritten``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from harness.contract import xmlsafe
from harness.errors import XMLRejected

_WSDL_ADDRESS = {"http://schemas.xmlsoap.org/wsdl/soap/", "http://schemas.xmlsoap.org/wsdl/soap12/",
                 "http://schemas.xmlsoap.org/wsdl/http/"}
_DISCO_SOAP = "http://schemas.xmlsoap.org/disco/soap/"
_DISCO_SCL = "http://schemas.xmlsoap.org/disco/scl/"
#: Descriptions are small; a larger XML body is not parsed for addresses (the upstream's own
#: origin is still replaced).
_MAX_PARSED = 1024 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_description(method: str, path: str, status: int) -> bool:
    """A GET answered 200 on an ``.asmx`` endpoint itself (``?WSDL``, ``?disco``, ``?op=``, the
    help page): not a call, which has ``/Operation`` after the endpoint."""
    if method != "GET" or status != 200:
        return False
    return path.split("?", 1)[0].rstrip("/").lower().endswith(".asmx")


def origin(scheme: str, host: str, port: int | None = None) -> str:
    """``scheme://host[:port]``, the port left out when it is the scheme's default."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    if port is None or _DEFAULT_PORTS.get(scheme) == port:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def named_origins(body: bytes) -> set[str]:
    """The origins the description's address elements name (WSDL and disco); empty when the
    body is not XML the hardened parser accepts."""
    if len(body) > _MAX_PARSED or body.lstrip()[:1] != b"<":
        return set()
    try:
        root = xmlsafe.parse_xml(body)
    except XMLRejected:
        return set()
    found = set()
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        ns = xmlsafe.namespace(element)
        name = xmlsafe.local_name(element)
        if ns in _WSDL_ADDRESS and name == "address":
            values = [element.get("location")]
        elif ns == _DISCO_SOAP and name == "soap":
            values = [element.get("address")]
        elif ns == _DISCO_SCL and name == "contractRef":
            values = [element.get("ref"), element.get("docRef")]
        else:
            continue
        found.update(o for o in map(_origin_of, values) if o)
    return found


def _origin_of(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def rewrite(body: bytes, origins: Iterable[str], to: str) -> tuple[bytes, list[str]]:
    """``body`` with every one of ``origins`` (followed by a path, query, quote, ``<`` or
    space) replaced by ``to``; and the origins that were found. Case-insensitive, as scheme and
    host are."""
    wanted = sorted({o for o in origins if o and o.lower() != to.lower()}, key=len, reverse=True)
    if not wanted:
        return body, []
    pattern = re.compile(b"(?:" + b"|".join(re.escape(o.encode()) for o in wanted)
                         + rb")(?=[/?#\"'<\s]|$)", re.IGNORECASE)
    found: set[str] = set()

    def replace(match: re.Match[bytes]) -> bytes:
        found.add(match.group(0).decode("ascii", "replace"))
        return to.encode()

    return pattern.sub(replace, body), sorted(found)
