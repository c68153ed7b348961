"""A request as ASMX reads it, before it looks at the call (checked with curl on the real runtime;
the rows of harness/contract/asmx_matrix.json pin each):

- A SOAP body is decoded by the Content-Type's charset, not by the XML declaration (.NET's
  ``RequestResponseUtils.GetEncoding``): ``text/xml; charset=iso-8859-1`` with a UTF-8
  declaration is ISO-8859-1. ``text/xml`` without charset is US-ASCII, as RFC 3023 says: each
  byte over 127 reads as "?". ``application/soap+xml`` without charset is detected from the
  document (UTF-8 unless a byte-order mark or declaration says otherwise). A byte-order mark
  wins over the header. Bytes the charset cannot decode read as U+FFFD.
- A form (``application/x-www-form-urlencoded``) with a charset has its percent-escapes
  decoded in that charset (``id=%E9`` with ``charset=iso-8859-1`` is "é").
- A query or form field without "=" has no name (ASP.NET's NameValueCollection keys it null):
  it is no parameter.

``as_read`` rewrites a request into that reading, in UTF-8 with a UTF-8 declaration, so the
rest of the reference reads it as it reads any call.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import replace
from urllib.parse import quote_plus, unquote_to_bytes, urlsplit, urlunsplit

from harness.contract.bindings import FORM_TYPE
from harness.traffic.exchange import HttpRequest, content_type_params, media_type

_SOAP_TYPES = ("text/xml", "application/soap+xml")
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE,
         codecs.BOM_UTF32_BE)
_DECLARED = re.compile(rb"""^(\s*<\?xml[^>]*?encoding\s*=\s*)(["'])[^"']*\2""")
_UTF8 = ("utf-8", "utf8")


def as_read(request: HttpRequest, has_operation: bool) -> HttpRequest:
    """``request`` as ASMX reads it (see the module's docstring); the same object when
    nothing changes (the usual UTF-8 call)."""
    media = media_type(request.content_type)
    charset = content_type_params(request.content_type).get("charset", "").lower()
    if not has_operation and request.method == "POST" and media in _SOAP_TYPES:
        return _soap_text(request, media, charset)
    if not has_operation:
        return request
    if request.method == "GET" and "?" in request.url:
        parts = urlsplit(request.url)
        named = _named_fields(parts.query)
        if named != parts.query:
            request = replace(request, url=urlunsplit(parts._replace(query=named)))
    if request.method == "POST" and media == FORM_TYPE:
        body = _form_text(request.body, charset)
        if body != request.body:
            request = replace(request, body=body).with_header("Content-Length", str(len(body)))
    return request


def _soap_text(request: HttpRequest, media: str, charset: str) -> HttpRequest:
    body = request.body
    if body.startswith(_BOMS) or (not charset and media == "application/soap+xml"):
        return request  # the document says its encoding itself
    if charset in _UTF8:
        try:
            body.decode("utf-8")
            return request  # the usual call: nothing to change
        except UnicodeDecodeError:
            text = body.decode("utf-8", errors="replace")
    elif charset:
        try:
            text = body.decode(charset, errors="replace")
        except LookupError:  # a charset .NET does not know: ASCII, as without one
            text = _ascii(body)
    else:  # text/xml without charset
        text = _ascii(body)
    data = _DECLARED.sub(rb"\1\2utf-8\2", text.encode("utf-8"), count=1)
    return replace(request, body=data).with_header("Content-Length", str(len(data)))


def _ascii(body: bytes) -> str:
    """``body`` read as .NET's ASCIIEncoding reads it: each byte over 127 is "?"."""
    return body.decode("ascii", errors="replace").replace("\ufffd", "?")


def _named_fields(encoded: str) -> str:
    """The fields that have a name: a part without "=" is dropped."""
    if not encoded or all("=" in part for part in encoded.split("&") if part):
        return encoded
    return "&".join(part for part in encoded.split("&") if "=" in part)


def _form_text(body: bytes, charset: str) -> bytes:
    """A form body with nameless fields dropped and, in another charset than UTF-8, its
    escapes re-encoded as UTF-8."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return body  # not URL-encoded: the classifier says so
    named = _named_fields(text)
    if not charset or charset in _UTF8 or "%" not in named:
        return named.encode("ascii")
    try:
        codecs.lookup(charset)
    except LookupError:
        return named.encode("ascii")
    fields = []
    for part in named.split("&"):
        name, _, value = part.partition("=")
        fields.append(f"{_recode(name, charset)}={_recode(value, charset)}")
    return "&".join(fields).encode("ascii")


def _recode(text: str, charset: str) -> str:
    return quote_plus(unquote_to_bytes(text.replace("+", " ")).decode(charset, errors="replace"))
