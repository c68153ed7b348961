"""WSDLs read where the user points: a URL (``?WSDL`` added when missing) or a file.

The contract's WSDL reader (``harness.contract.wsdl_import``) reads documents, never the
network; this module fetches them (through the one sending path, ``harness.traffic.send``)
and hands them to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from harness.contract.model import Contract
from harness.contract.wsdl_import import MAX_WSDL_BYTES, Description, WsdlError, to_contract
from harness.contract.wsdl_import import describe as describe_document
from harness.files import read_limited
from harness.http_messages import HttpRequest
from harness.traffic import send


def read_source(source: str, timeout: float = 30.0,
                options: send.SendOptions | None = None) -> tuple[str, bytes]:
    """(location, bytes) of a WSDL given as a URL (``?WSDL`` added when missing) or a file;
    ``options``: the run's SendOptions (its TLS and authentication: a deployment behind NTLM
    serves its WSDL behind NTLM too)."""
    if source.lower().startswith(("http://", "https://")):
        send.base_url(source)  # a bad port: one line, before any connection
        return _fetch(source if "?" in source else f"{source}?WSDL", timeout, options)
    path = Path(source)
    document = read_limited(path, MAX_WSDL_BYTES, "WSDL")  # a pipe too: never read whole
    return path.resolve().as_uri(), document


def _fetch(url: str, timeout: float, options: send.SendOptions | None = None
           ) -> tuple[str, bytes]:
    host = urlsplit(url).netloc
    options = (replace(options, timeout=timeout) if options is not None
               else send.SendOptions(timeout=timeout))
    with send.client(options, 1) as http:
        response = send.send(http, HttpRequest("GET", url, (("Host", host),)), options)
    if response.status != 200:
        raise WsdlError(f"{url} answered HTTP {response.status}, not a WSDL")
    if len(response.body) > MAX_WSDL_BYTES:
        raise WsdlError(f"{url} answered more than {MAX_WSDL_BYTES} bytes")
    return url, response.body


def describe(source: str, options: send.SendOptions | None = None) -> Description:
    """The Description of the WSDL at ``source`` (a URL or a file; ``options``: how to fetch
    it, see ``read_source``)."""
    location, document = read_source(source, options=options)
    return describe_document(source, document, location)


def import_wsdls(sources: Iterable[str], name: str = "",
                 options: send.SendOptions | None = None) -> Contract:
    """``harness contract --wsdl``: the contract of the WSDLs at ``sources`` (fetched with
    ``options``, the run's SendOptions, when given)."""
    return to_contract([describe(s, options=options) for s in sources], name)
