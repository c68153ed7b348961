"""Property (issue 21 item 4): no sensitive value ever reaches the disk in clear, whatever the
binding (SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST), the charset (UTF-8, UTF-16, Latin-1 where
the value fits it) and the form a sensitive result travels in (SOAP, an XML ``string``
document, ``text/plain``, JSON). Each example goes through capture's own writer (classify,
redact, write the recording file), then the file is read back raw and decoded."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote_plus

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.capture.writer import Console, Transcriber, WriterSetup
from harness.contract.bindings import Binding, build_request, build_response
from harness.contract.model import school_mobile
from harness.traffic.exchange import HttpResponse
from harness.traffic.recording import RecordingWriter, read_exchanges

UPSTREAM = "http://127.0.0.1:9"
CONTRACT = school_mobile()
KEY = b"p" * 32
TOKEN_OP = next(op for op in CONTRACT.operations if op.result_sensitive)
AUTH = CONTRACT.find("AuthCode")
LOGOUT = CONTRACT.find("LogoutFromSchool")

# A marker start keeps a value from matching text that happens to be in every message.
values = st.builds(lambda s: "Zq" + s, st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"),
    min_size=4, max_size=24))
charsets = st.sampled_from(["utf-8", "utf-16", "latin-1"])
forms = st.sampled_from(["xml", "text/plain", "json"])


def _recode(body: bytes, headers: tuple, charset: str, kind: str | None = None):
    """``body`` (UTF-8) in ``charset``, its Content-Type saying so (and typed ``kind``)."""
    text = body.decode("utf-8")
    if charset != "utf-8" and text.startswith("<?xml"):
        text = text.replace('encoding="utf-8"', f'encoding="{charset}"', 1)
    out = tuple((k, (f"{kind or v.split(';')[0]}; charset={charset}" + (
        "; " + v.split(";", 2)[2].strip() if v.count(";") > 1 else ""))
        if k.lower() == "content-type" else v) for k, v in headers)
    return text.encode(charset), out


def _fits(value: str, charset: str) -> bool:
    try:
        value.encode(charset)
        return True
    except UnicodeEncodeError:
        return False


def _forms(value: str) -> set[str]:
    return {value, html.escape(value, quote=False), html.escape(value), quote_plus(value),
            quote(value), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


def _record(path: Path, exchanges: list) -> None:
    RecordingWriter(str(path), upstream=UPSTREAM).close()
    setup = WriterSetup(str(path), CONTRACT, {"upstream": UPSTREAM}, key=KEY, upstream=UPSTREAM)
    transcriber = Transcriber(setup, Console(io.StringIO()))
    for request, response in exchanges:
        transcriber.record((
            request.method, request.url,
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in request.headers],
            request.body, "HTTP/1.1", 1.0, 1.1,
            (response.status, [(k.encode("latin-1"), v.encode("latin-1"))
                               for k, v in response.headers],
             response.body, "OK", "HTTP/1.1", 1.2, 1.3), None, None))
    transcriber.close()


def _texts(path: Path) -> list[str]:
    """Everything in the file a reader could see: the raw file, and each message decoded in
    every charset of the test (bodies may be stored in base64)."""
    out = [path.read_bytes().decode("utf-8", "replace")]
    for exchange in read_exchanges([path]):
        out.append(unquote_plus(exchange.request.url))
        for message in (exchange.request, exchange.response):
            if message is None:
                continue
            out.append(repr(message.headers))
            for charset in ("utf-8", "utf-16", "latin-1"):
                text = message.body.decode(charset, "replace")
                out += [text, html.unescape(text), unquote_plus(text)]
    return out



def _token_answer(binding: Binding, token: str, charset: str, form: str
                  ) -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """GetTokenDevice's answer of ``token`` over ``binding``, in ``form`` (an XML answer,
    text/plain over GET/POST, or JSON) and ``charset`` where the token fits it."""
    answer = build_response(CONTRACT, TOKEN_OP, binding, token)
    answer_charset = charset if _fits(token, charset) else "utf-8"
    soap = binding in (Binding.SOAP11, Binding.SOAP12)
    if form == "text/plain" and not soap:
        return _recode(token.encode("utf-8"), answer.headers, answer_charset, "text/plain")
    if form == "json":
        return _recode(json.dumps({"d": token}).encode("utf-8"), answer.headers,
                       answer_charset, "application/json")
    return _recode(answer.body, answer.headers, answer_charset)

@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(code=values, phone=values, phone_number=values, uuid=values, token=values,
       binding=st.sampled_from(list(Binding)), charset=charsets, form=forms)
def test_no_sensitive_value_reaches_the_disk_in_clear(tmp_path_factory, code, phone,
                                                      phone_number, uuid, token, binding,
                                                      charset, form):
    soap = binding in (Binding.SOAP11, Binding.SOAP12)
    if not _fits(token, charset) or (charset != "utf-8" and not soap):
        charset_for_requests = "utf-8"  # GET/POST fields are URL-encoded UTF-8
    else:
        charset_for_requests = charset if all(_fits(v, charset) for v in
                                              (code, phone, phone_number, uuid)) else "utf-8"
    exchanges = []
    for op, arguments in ((AUTH, {"code": code, "phone": phone}),
                          (LOGOUT, {"PhoneNumber": phone_number, "UuId": uuid,
                                    "id_row_central": "3"})):
        request = build_request(CONTRACT, op, arguments, binding, UPSTREAM)
        if soap and charset_for_requests != "utf-8":
            body, headers = _recode(request.body, request.headers, charset_for_requests)
            request = type(request)(request.method, request.url, headers, body)
        reply = build_response(CONTRACT, op, binding, None)
        exchanges.append((request, reply))
    token_request = build_request(CONTRACT, TOKEN_OP, {"id": "device-7"}, binding, UPSTREAM)
    body, headers = _token_answer(binding, token, charset, form)
    headers = tuple((k, str(len(body)) if k.lower() == "content-length" else v)
                    for k, v in headers)
    exchanges.append((token_request, HttpResponse(200, headers, body)))

    path = tmp_path_factory.mktemp("property") / "r.jsonl"
    _record(path, exchanges)
    assert len(list(read_exchanges([path]))) == 3
    seen = _texts(path)
    for name, value in (("code", code), ("phone", phone), ("PhoneNumber", phone_number),
                        ("UuId", uuid), ("token", token)):
        for form_of in _forms(value):
            for text in seen:
                assert form_of not in text, (name, value, binding, charset, form)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(code=values, phone=values, token=values, secret=values,
       header=st.sampled_from(["X-Gateway-Key", "x-api-key", "X-Auth-Token", "Api-Key",
                               "Authorization", "Cookie"]),
       binding=st.sampled_from(list(Binding)), charset=charsets, form=forms)
def test_no_sensitive_value_or_credential_reaches_a_report_in_clear(code, phone, token, secret,
                                                                    header, binding, charset,
                                                                    form):
    """What certify writes of an exchange (``http_text``: Allure attachments, JUnit examples,
    the HTML report) within ``redacting_reports``: no sensitive value, token or credential."""
    from harness.reports.allure_results import http_text
    from harness.traffic.redaction import ReportRedaction, redacting_reports

    secret = secret.encode("latin-1", "replace").decode("latin-1")  # a header is latin-1
    request = build_request(CONTRACT, AUTH, {"code": code, "phone": phone}, binding, UPSTREAM)
    request = type(request)(request.method, request.url, (*request.headers, (header, secret)),
                            request.body)
    answer = build_response(CONTRACT, TOKEN_OP, binding, token)
    body, headers = _token_answer(binding, token, charset, form)
    answer = type(answer)(200, (*headers, ("Set-Cookie", secret)), body)
    with redacting_reports(ReportRedaction(CONTRACT, KEY)):
        text = http_text(request) + http_text(answer, TOKEN_OP.name)
    seen = [text, unquote_plus(text), html.unescape(text)]
    for name, value in (("code", code), ("phone", phone), ("token", token),
                        ("credential", secret)):
        for form_of in _forms(value):
            assert not [t for t in seen if form_of in t], (name, value, binding, charset, form)
