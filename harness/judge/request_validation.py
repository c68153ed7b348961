"""ASP.NET's request validation, recognised in one exchange: markup in a GET/POST value refused.

ASP.NET (on by default) refuses a query string or form value holding markup (a ``<`` before a
letter, ``!``, ``/`` or ``?``, or ``&#``) with a 500 whose text says "A potentially dangerous
Request.QueryString value was detected from the client", before the service reads its
parameters. The spec leaves allowed values open (4.10), so this is a permitted deviation, a
warning in every command. certify judges it by behaviour (the same call with plain values
succeeds: ``rules.Case.values_refused``); a recording has no such second call, so lint, replay,
diff and load recognise the refusal itself: markup in a value AND ASP.NET's words for refusing
it (any other error answering markup may have another cause, and is judged as any error).
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qsl, urlsplit

from harness.traffic.exchange import HttpRequest, HttpResponse, media_type
from harness.traffic.redaction import is_pseudonym

#: What ASP.NET's CrossSiteScriptingValidation takes for markup (Mono lets ``</`` and ``<?``
#: through; the refusal's own words must be there too, so the wider set does no harm).
MARKUP = re.compile(r"<[A-Za-z!/?]|&#")
#: ASP.NET's message, in a text/plain answer, an HTML error page or a stack trace alike.
_REFUSAL = re.compile(rb"A potentially dangerous Request\.(?:QueryString|Form|Cookies|Path)"
                      rb" value was detected")
#: How much of a body is searched for the message (it comes first; error pages are small).
_SCANNED = 16 * 1024
FORM = "application/x-www-form-urlencoded"
#: What the warning says, in every command.
EXPLANATION = ("ASP.NET's request validation refuses markup in GET/POST values; the spec "
               "leaves allowed values open (4.10)")


def _fields(request: HttpRequest) -> list[tuple[str, str]]:
    """The query and form fields of ``request`` (a SOAP body is not validated)."""
    fields = parse_qsl(urlsplit(request.url).query, keep_blank_values=True, errors="replace")
    if media_type(request.content_type) == FORM and request.body:
        fields += parse_qsl(request.body[:1024 * 1024].decode("latin-1"),
                            keep_blank_values=True, errors="replace")
    return fields


def markup_value(request: HttpRequest) -> str | None:
    """The first query or form field of ``request`` whose value ASP.NET takes for markup, as
    ``name='value'``; None when there is none."""
    return next((f"{name}={value!r}" for name, value in _fields(request)
                 if MARKUP.search(value)), None)


def is_refusal(response: HttpResponse) -> bool:
    """Whether ``response`` is ASP.NET's request-validation refusal."""
    return response.status >= 400 and _REFUSAL.search(response.body[:_SCANNED]) is not None


def not_served(response: HttpResponse) -> bool:
    """The call is not served at all (no such path or method): whatever else differs from a
    refusal of values, it is not one (a 404 never judged the values)."""
    return response.status in (404, 405, 501)


def markup_refused(request: HttpRequest, response: HttpResponse | None) -> str | None:
    """The field refused when ``response`` is ASP.NET refusing markup in ``request``'s values
    (``name='value'``), else None. A recording redacts sensitive values: a field ASP.NET's
    message names whose recorded value is a pseudonym is taken at the message's word (and
    its value is not quoted)."""
    if response is None or not is_refusal(response):
        return None
    found = markup_value(request)
    if found is not None:
        return found
    named = _REFUSED_FIELD.search(html.unescape(
        response.body[:_SCANNED].decode("utf-8", "replace")))
    if named is not None and any(name == named[1] and is_pseudonym(value)
                                 for name, value in _fields(request)):
        return f"{named[1]}=(redacted value)"
    return None


#: The field ASP.NET's message names: ``... from the client (code="<a").``
_REFUSED_FIELD = re.compile(r'value was detected from the client \(([^=\s"]+)="')
