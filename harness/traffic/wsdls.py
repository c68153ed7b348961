"""WSDLs read where the user points: a URL (``?WSDL`` added when missing) or a file.

The contract's WSDL reader (``harness.contract.wsdl_import``) reads documents, never the
network; this module fetches them (through the one sending path, ``harness.traffic.send``)
and hands them to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from harness.contract.model import Contract
from harness.contract.wsdl_import import MAX_WSDL_BYTES, Description, WsdlError, to_contract
from harness.contract.wsdl_import import describe as describe_document
from harness.files import read_limited
from harness.http_messages import HttpRequest
from harness.traffic import send


def read_source(source: str, timeout: float = 30.0) -> tuple[str, bytes]:
    """(location, bytes) of a WSDL given as a URL (``?WSDL`` added when missing) or a file."""
    if source.lower().startswith(("http://", "https://")):
        return _fetch(source if "?" in source else f"{source}?WSDL", timeout)
    path = Path(source)
    document = read_limited(path, MAX_WSDL_BYTES, "WSDL")  # a pipe too: never read whole
    return path.resolve().as_uri(), document


def _fetch(url: str, timeout: float) -> tuple[str, bytes]:
    host = urlsplit(url).netloc
    with send.client(timeout) as http:
        response = send.send(http, HttpRequest("GET", url, (("Host", host),)))
    if response.status != 200:
        raise WsdlError(f"{url} answered HTTP {response.status}, not a WSDL")
    if len(response.body) > MAX_WSDL_BYTES:
        raise WsdlError(f"{url} answered more than {MAX_WSDL_BYTES} bytes")
    return url, response.body


def describe(source: str) -> Description:
    """The Description of the WSDL at ``source`` (a URL or a file)."""
    location, document = read_source(source)
    return describe_document(source, document, location)


def import_wsdls(sources: Iterable[str], name: str = "") -> Contract:
    """``harness contract --wsdl``: the contract of the WSDLs at ``sources``."""
    return to_contract([describe(s) for s in sources], name)
