"""Redaction: sensitive values become stable pseudonyms in every binding, the rest stays as sent."""

from __future__ import annotations

import gzip
import html
import json
import os
import re
from dataclasses import replace
from urllib.parse import quote, quote_plus

import pytest

from harness.contract.bindings import Binding, build_request, build_response, classify
from harness.contract.model import reference_result, sample_arguments
from harness.contract.xmlsafe import local_name, parse_xml
from harness.traffic.exchange import HttpRequest, HttpResponse
from harness.traffic.redaction import (
    Redactor,
    is_pseudonym,
    key_id,
    load_or_create_key,
    pseudonym,
)

KEY = b"k" * 32


@pytest.fixture(scope="module")
def redactor(contract) -> Redactor:
    return Redactor.for_contract(contract, KEY)


def _forms(value: str) -> list[bytes]:
    """Every way a value can appear in a message: raw, XML-escaped, URL-encoded."""
    forms = {value, html.escape(value, quote=False), quote_plus(value), quote(value)}
    return [f.encode("utf-8") for f in forms if f]


def _sensitive(contract, op, args) -> list[str]:
    return [v for k, v in args.items() if op.parameter(k).sensitive]


@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("binding", list(Binding))
def test_every_sensitive_argument_is_replaced_in_every_binding(contract, redactor, binding,
                                                               variant):
    for op in contract.operations:
        args = sample_arguments(op, variant)
        request = build_request(contract, op, args, binding, "http://svc.example")
        redacted = redactor.request(request)
        wire = redacted.url.encode() + redacted.body
        for value in _sensitive(contract, op, args):
            for form in _forms(value):
                assert form not in wire, (op.name, binding, form)
        # What the service would read from the redacted request: pseudonyms where sensitive,
        # the very same values elsewhere.
        seen = classify(contract, redacted).args
        for name, value in args.items():
            expected = pseudonym(value, KEY) if op.parameter(name).sensitive else value
            assert seen[name] == expected, (op.name, binding, name)
        assert redacted.header("Content-Length") in (None, str(len(redacted.body)))


def test_same_value_same_pseudonym_across_bindings(contract, redactor):
    op = next(o for o in contract.operations if any(p.sensitive for p in o.parameters))
    args = sample_arguments(op)
    seen = {b: classify(contract, redactor.request(build_request(contract, op, args, b))).args
            for b in Binding}
    assert len({tuple(sorted(a.items())) for a in seen.values()}) == 1
    other = Redactor.for_contract(contract, b"x" * 32)
    assert classify(contract, other.request(build_request(contract, op, args,
                                                          Binding.HTTP_GET))).args != seen[
        Binding.HTTP_GET]


def test_soap_body_outside_the_values_stays_byte_exact(contract, redactor):
    op = next(o for o in contract.operations if o.parameters[0].sensitive)
    args = sample_arguments(op, 1)
    request = build_request(contract, op, args, Binding.SOAP11)
    redacted = redactor.request(request)
    first = op.parameters[0].name.encode()
    before, _after = request.body.split(b"<" + first + b">", 1)
    assert redacted.body.startswith(before + b"<" + first + b">redacted-")
    # Everything after the last sensitive value is untouched, byte for byte.
    tail = request.body.rsplit(b"</", 3)[-3:]
    assert redacted.body.endswith(b"</".join(tail))


def test_prefixed_cdata_and_mixed_forms_are_redacted(contract, redactor):
    op = next(o for o in contract.operations if o.parameters[0].sensitive)
    name = op.parameters[0].name
    body = (f'<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body>'
            f'<t:{op.name} xmlns:t="{contract.namespace}">'
            f'<t:{name}><![CDATA[0501234567]]></t:{name}></t:{op.name}></e:Body></e:Envelope>'
            ).encode()
    redacted = redactor.request(HttpRequest("POST", f"http://x{op.endpoint}",
                                            (("Content-Type", "text/xml"),), body))
    assert b"0501234567" not in redacted.body
    payload = parse_xml(redacted.body)[0][0]
    assert is_pseudonym(payload[0].text) and local_name(payload) == op.name


def test_an_envelope_parsed_by_classification_is_redacted_in_any_namespace(contract, redactor):
    """Capture's writer hands over the envelope classification parsed: the sensitive elements
    are found in that tree, in any namespace or none, in a SOAP header too; a redactor with
    no names at all changes nothing (an empty tag filter would match every element)."""
    op = next(o for o in contract.operations if o.parameters[0].sensitive)
    name = op.parameters[0].name
    body = (f'<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/">'
            f'<e:Header><{name}>0509999999</{name}></e:Header><e:Body>'
            f'<t:{op.name} xmlns:t="{contract.namespace}"><t:{name}>0501234567</t:{name}>'
            f'</t:{op.name}></e:Body></e:Envelope>').encode()
    request = HttpRequest("POST", f"http://x{op.endpoint}", (("Content-Type", "text/xml"),), body)
    envelope = classify(contract, request).envelope
    redacted = redactor.request(request, envelope=envelope)
    assert b"0501234567" not in redacted.body and b"0509999999" not in redacted.body
    assert redacted.body.count(b">redacted-") == 2
    nothing = Redactor(KEY, frozenset())
    assert nothing.request(request, envelope=envelope).body == body


def test_sensitive_results_are_redacted_in_soap_and_bare_documents(contract, redactor):
    op = next(o for o in contract.operations if o.result_sensitive)
    args = sample_arguments(op)
    result = reference_result(op, args)
    for binding in Binding:
        response = build_response(contract, op, binding, result)
        redacted = redactor.response(response)
        assert result.encode() not in redacted.body, binding
        assert re.search(rb"redacted-[0-9a-f]{16}", redacted.body), binding
        assert redacted.header("Content-Length") == str(len(redacted.body))


def test_an_unparsed_answer_is_searched_for_elements_under_any_prefix(contract, redactor):
    """A body nobody parsed yet (an answer) is only parsed when it could hold a sensitive
    element: under no prefix, an ASCII one or a non-ASCII one, and with attributes; a name in
    text or in a namespace URI alone does not make it parse, and changes nothing."""
    op = next(o for o in contract.operations if o.result_sensitive)
    name = op.result_element
    for open_tag, close_tag in ((f"<{name}>", f"</{name}>"),
                                (f"<t:{name}>", f"</t:{name}>"),
                                (f"<préfixe:{name} a='1'>", f"</préfixe:{name}>")):
        xmlns = ' xmlns:t="urn:t" xmlns:préfixe="urn:p"'
        body = (f'<?xml version="1.0" encoding="utf-8"?><{op.response_element}{xmlns}>'
                f"{open_tag}TOKEN-123{close_tag}</{op.response_element}>").encode()
        redacted = redactor.response(HttpResponse(200, (("Content-Type", "text/xml"),), body))
        assert b"TOKEN-123" not in redacted.body and b">redacted-" in redacted.body, open_tag
    quiet = (f'<r xmlns:x="urn:{name}"><note>the {name} and phone:</note></r>').encode()
    response = HttpResponse(200, (("Content-Type", "text/xml"),), quiet)
    assert not redactor._mentions_names(quiet)
    assert redactor.response(response) is response


def test_a_message_with_nothing_to_redact_is_the_same_object(contract, redactor):
    """No copy when nothing changes: headers without a credential and a body without a
    sensitive value give back the very message (capture redacts every exchange)."""
    op = next(o for o in contract.operations if not o.result_sensitive)
    response = build_response(contract, op, Binding.SOAP11)
    assert redactor.response(response) is response
    assert redactor._headers(response.headers, None) is response.headers


def test_headers_and_extra_names(contract):
    redactor = Redactor.for_contract(contract, KEY, extra=["X-Device", "Tid"])
    request = HttpRequest("GET", "http://x/GetTeacherGroups.asmx/GetTeacherGrpupsByID?Tid=77",
                          (("Authorization", "Bearer s3cret"), ("Cookie", "sid=abc"),
                           ("x-device", "pixel-7"), ("Accept", "*/*")))
    redacted = redactor.request(request)
    flat = repr(redacted)
    for secret in ("s3cret", "sid=abc", "pixel-7", "Tid=77"):
        assert secret not in flat
    assert redacted.header("Accept") == "*/*"
    assert [k for k, _ in redacted.headers] == [k for k, _ in request.headers]
    response = redactor.response(HttpResponse(200, (("Set-Cookie", "sid=abc; Path=/"),)))
    assert "sid=abc" not in repr(response)


def test_compressed_body_is_decoded_redacted_and_reencoded(contract, redactor):
    op = next(o for o in contract.operations if o.result_sensitive)
    response = build_response(contract, op, Binding.SOAP12, "TOKEN-123")
    body = gzip.compress(response.body)
    packed = HttpResponse(200, (*response.headers, ("Content-Encoding", "gzip")), body)
    redacted = redactor.response(packed)
    assert b"TOKEN-123" not in gzip.decompress(redacted.body)
    unknown = HttpResponse(200, (("Content-Encoding", "x-secret"),), b"TOKEN-123")
    notes: list[str] = []
    assert redactor.response(unknown, notes=notes).body == b"" and notes


def test_non_xml_bodies_pass_untouched(redactor):
    for body in (b"The resource cannot be found.", b"<html><p>phone</p>", b"\x00\x01binary"):
        response = HttpResponse(404, (("Content-Type", "text/plain"),), body)
        assert redactor.response(response).body == body


def test_key_file_is_private_and_stable(tmp_path):
    path = tmp_path / "rec.jsonl.key"
    key = load_or_create_key(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert load_or_create_key(path) == key
    assert key_id(key) != key_id(b"other" * 8)
    assert key.hex() not in key_id(key)


def test_credential_looking_headers_are_redacted_without_naming_them(contract):
    from harness.traffic.redaction import REPORT_REDACTED, redact_credentials

    headers = (("X-Gateway-Key", "gw1"), ("x-api-key", "ak2"), ("X-Auth-Token", "tk3"),
               ("Api-Key", "k4"), ("ApiKey", "k5"), ("X-CSRF-Token", "c6"),
               ("Accept", "*/*"), ("X-Keyboard", "kb"), ("Tokenizer", "t"), ("X-Tenant", "t7"))
    recorded = Redactor.for_contract(contract, KEY).request(
        HttpRequest("GET", "http://x/", headers))
    secret = {"gw1", "ak2", "tk3", "k4", "k5", "c6"}
    assert {v for _, v in recorded.headers} & secret == set()
    assert recorded.header("X-Keyboard") == "kb" and recorded.header("Tokenizer") == "t"
    reported = dict(redact_credentials(headers, extra=["x-tenant"]))
    assert {k for k, v in reported.items() if v == REPORT_REDACTED} == {
        "X-Gateway-Key", "x-api-key", "X-Auth-Token", "Api-Key", "ApiKey", "X-CSRF-Token",
        "X-Tenant"}


@pytest.mark.parametrize("charset", ["utf-8", "iso-8859-1", "utf-16", "utf-16-le", "windows-1255"])
def test_a_sensitive_result_is_redacted_as_text_in_any_charset(contract, redactor, charset):
    token = "טוקן-9" if charset == "windows-1255" else "tök-9"
    body = token.encode(charset)
    for ctype in (f"text/plain; charset={charset}", f"text/html; charset={charset}"):
        answer = HttpResponse(200, (("Content-Type", ctype), ("Content-Length", str(len(body)))),
                              body)
        redacted = redactor.response(answer, operation="GetTokenDevice")
        assert redacted.body.decode(charset).lstrip("\ufeff") == pseudonym(token, KEY)
        assert redacted.header("Content-Length") == str(len(redacted.body))
    # Another operation's answer, or an error page, is left as it is.
    plain = HttpResponse(200, (("Content-Type", "text/plain"),), b"A10")
    assert redactor.response(plain, operation="GetTeacherGrpupsByID").body == b"A10"
    assert redactor.response(replace(plain, status=500), operation="GetTokenDevice").body == b"A10"


def test_json_bodies_are_redacted_by_member_and_as_a_sensitive_result(redactor):
    asmx = HttpResponse(200, (("Content-Type", "application/json; charset=utf-8"),),
                        b'{"d":"tok-1"}')
    assert b"tok-1" not in redactor.response(asmx, operation="GetTokenDevice").body
    request = HttpRequest("POST", "http://x/AuthCodeSending.asmx/AuthCode",
                          (("Content-Type", "application/json"),),
                          json.dumps({"code": "c-77", "phone": 501234567, "other": "o"}).encode())
    sent = json.loads(redactor.request(request).body)
    assert sent == {"code": pseudonym("c-77", KEY), "phone": pseudonym("501234567", KEY),
                    "other": "o"}
    broken = replace(request, body=b'{"code": "c-77"')
    notes: list[str] = []
    assert b"c-77" not in redactor.request(broken, notes=notes).body and notes


def test_a_runs_report_redaction_gives_each_secret_one_face(contract):
    """Issue 30 item 6: the secrets a run meets (sensitive values of its messages, credential
    headers) or is given (-H values, --values) show by one pseudonym, in any form they take
    (in clear, XML-escaped, URL-encoded), in messages and in words; pseudonyms already there
    are left alone; a 1-3 character value is not hunted in text."""
    import pickle

    from harness.traffic.redaction import ReportRedaction, pseudonym

    key = b"r" * 32
    run = ReportRedaction(contract, key)
    run.add(["s3cret&co", "ab"])
    face = pseudonym("s3cret&co", key)
    assert run.text("said s3cret&co, s3cret&amp;co and s3cret%26co; ab") == \
        f"said {face}, {face} and {face}; ab"
    request = build_request(contract, contract.operation("AuthCode"),
                            {"code": "C-0042", "phone": "0501234567"}, Binding.HTTP_GET,
                            "http://svc.example")
    request = request.with_header("Authorization", "Bearer tok-9")
    shown = run.message(request)
    assert "0501234567" not in shown.url and pseudonym("0501234567", key) in shown.url
    assert shown.header("Authorization") == pseudonym("Bearer tok-9", key)
    echoed = "Invalid phone '0501234567' (Bearer tok-9)"
    assert run.text(echoed) == (f"Invalid phone '{pseudonym('0501234567', key)}' "
                                f"({pseudonym('Bearer tok-9', key)})")
    assert run.text(face) == face  # a pseudonym is never redacted again
    assert run.learned() and not run.learned()  # what is new since the last call, once
    copy = pickle.loads(pickle.dumps(run))  # a worker process's
    assert copy.text(echoed) == run.text(echoed)
    copy.observe(None, HttpResponse(200, (("X-Echo", "another-secret-value"),), b""), None)
    assert copy.learned() == {}  # an unnamed header is no secret by itself


def test_a_multipart_form_post_is_redacted_part_by_part(redactor):
    """A form POST sent as multipart/form-data (a browser's form, the ASMX matrix's row): the
    sensitive parts become pseudonyms, every other byte stays as sent."""
    body = (b'--b0\r\nContent-Disposition: form-data; name="code"\r\n\r\nCODE-4711\r\n'
            b'--b0\r\nContent-Disposition: form-data; name="phone"\r\n\r\n0509998877\r\n'
            b'--b0\r\nContent-Disposition: form-data; name="other"\r\n\r\nkept\r\n--b0--\r\n')
    request = HttpRequest("POST", "http://svc.example/AuthCodeSending.asmx/AuthCode",
                          (("Content-Type", "multipart/form-data; boundary=b0"),
                           ("Content-Length", str(len(body)))), body)
    redacted = redactor.request(request)
    assert b"CODE-4711" not in redacted.body and b"0509998877" not in redacted.body
    assert pseudonym("CODE-4711", KEY).encode() in redacted.body
    assert pseudonym("0509998877", KEY).encode() in redacted.body
    assert redacted.body.replace(pseudonym("CODE-4711", KEY).encode(), b"CODE-4711").replace(
        pseudonym("0509998877", KEY).encode(), b"0509998877") == body
    assert dict(redacted.headers)["Content-Length"] == str(len(redacted.body))


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/octet-stream"])
def test_form_pairs_under_another_content_type_are_redacted(redactor, content_type):
    body = b"code=CODE-4711&phone=0509998877&x=1"
    headers = (("Content-Type", content_type),) if content_type else ()
    request = HttpRequest("POST", "http://svc.example/AuthCodeSending.asmx/AuthCode",
                          headers, body)
    redacted = redactor.request(request).body
    assert redacted == (f"code={pseudonym('CODE-4711', KEY)}&phone="
                        f"{pseudonym('0509998877', KEY)}&x=1").encode()
