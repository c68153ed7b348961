"""HTTP messages as reports show them: on the wire's form, redacted (``for_report``).

The judges keep a failing exchange's text as an example (JUnit system-out) while they judge;
the renderers attach the same text to Allure results. Both take it from here, below them.
"""

from __future__ import annotations

from harness.http_messages import HttpRequest, HttpResponse
from harness.traffic.redaction import for_report

#: Characters of a body shown in a JUnit example (the JSON has every finding).
EXAMPLE_BODY = 4000


def http_text(message: HttpRequest | HttpResponse, operation: str | None = None) -> str:
    """A request or response as it would appear on the wire (body decoded as UTF-8), as
    reports may show it (``for_report``: no credential, no sensitive value within
    ``redacting_reports``)."""
    message = for_report(message, operation)
    if isinstance(message, HttpRequest):
        first = f"{message.method} {message.url} {message.http_version}"
    else:
        first = f"{message.http_version} {message.status} {message.reason}".rstrip()
    head = "\n".join([first, *(f"{k}: {v}" for k, v in message.headers)])
    return f"{head}\n\n{message.body.decode('utf-8', 'replace')}"


def example_text(request: HttpRequest, response: HttpResponse | None,
                 operation: str | None = None) -> str:
    """An exchange as CI shows it: request and response as on the wire, credential headers
    redacted, bodies shortened to EXAMPLE_BODY characters."""
    def short(message: HttpRequest | HttpResponse) -> str:
        text = http_text(message, operation)
        return text if len(text) <= EXAMPLE_BODY else text[:EXAMPLE_BODY] + "\n[...]"
    return short(request) + "\n\n" + (short(response) if response is not None
                                      else "(no response)")
