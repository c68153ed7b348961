"""Which date texts ASMX reads, per binding and XSD type: the R9-DATETIME/-DATE/-TIME checks and
the reference's refusals agree with ASP.NET (tables recorded from the real runtime, Mono 6.8,
and re-checked against it in the interop lane with tests/services/dates)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from asmx_runtime import real_runtime

from harness.contract.model import ParamType, load
from harness.reference.server import running

DATES = Path(__file__).parent / "services" / "dates"

#: GET/POST fields: DateTime.Parse under the invariant culture, the same for dateTime, date and
#: time (ASMX converts every one with System.Convert). True: read; False: refused (500).
HTTP_FORMS = {
    "2024-01-31T12:34:56": True, "2024-01-31": True, "  2024-01-31  ": True,
    "2024-02-30": False, "2024-13-01": False, "2/29/2023": False, "2/29/2024": True,
    "1/31/2024": True, "31/1/2024": False, "2024/01/31": True, "01.31.2024": True,
    "31.01.2024": False, "12-31-2024": True, "31-12-2024": False, "2024-31-12": False,
    "2024-1-5": True, "1/31/24": True, "12/31/99": True, "1-1-1": True, "1-2-3": True,
    "1 2 3": True, "2024 01 31": True, "1/31": True, "Jan 2024": True, "Jan 31 2024": True,
    "31 January 2024": True, "January 31, 2024": True, "31-Jan-2024": True,
    "Wednesday, January 31, 2024": True, "Mon, 31 Jan 2024": False,
    "Wed, 31 Jan 2024 12:34:56 GMT": True, "31 Jan 2024 12:34": True,
    "12:34": True, "12:34:56": True, "12:34:56.789": True, "1:2:3": True, "12:34 PM": True,
    "13:00 PM": True, "0:00 AM": True, "1/31/2024 1:02:03 PM": True, "2024-01-31 PM": True,
    "2024-01-31 12:34:56": True, "2024-01-31T12:34": True, "2024/1/31 1:2": True,
    "2024-01-31T12:34:56.1234567+02:00": True, "2024-01-31T12:34:56.12345678": True,
    "2024-01-31T12:34:56Z": True, "2024-01-31T12:34:56 Z": True,
    "2024-01-31 12:34:56 +02:00": True, "2024-01-31 12:34:56 GMT": True,
    "2024-01-31T12:34:56+14:00": True, "2024-01-31T12:34:56+25:00": False,
    "0001-01-01": True, "9999-12-31T23:59:59": True, "0000-01-01": False,
    "10000-01-01": False, "-2024-01-01": False, "+2024-01-01": False,
    "25:00": False, "99:99": False, "12:60": False, "12:34:60": False, "123:4": False,
    "2024-01-31T24:00:00": False, "12.34": False, "T12:34": False, "2024-01-31TZ": False,
    "20240131": False, "2024": False, "hello": False, "Jan": False, "Monday": False,
}

#: SOAP elements: XmlConvert, one form per XSD type. (dateTime, date, time) read or refused.
SOAP_FORMS = {
    "2024-01-31T12:34:56": (True, False, False),
    "2024-01-31": (True, True, False),
    " 2024-01-31 ": (True, True, False),
    "2024-02-29": (True, True, False),
    "2024-02-30": (False, False, False),
    "2023-02-29": (False, False, False),
    "2024-02-30T00:00:00": (False, False, False),
    "2024-01-31T24:00:00": (False, False, False),
    "2024-01-31T12:34": (False, False, False),
    "2024-01-31 12:34:56": (False, False, False),
    "2024-01-31T12:34:56Z": (True, False, False),
    "2024-01-31T12:34:56z": (True, False, False),
    "2024-01-31T12:34:56.1234567+02:00": (True, False, False),
    "2024-01-31T12:34:56.123456789": (True, False, False),
    "2024-01-31T12:34:56.": (False, False, False),
    "2024-01-31T12:34:56+99:00": (True, False, False),
    "2024-01-31T12:34:56+0200": (False, False, False),
    "2024-01-31+14:00": (True, True, False),
    "2024-01-31+15:00": (True, False, False),
    "2024-01-31z": (True, True, False),
    "12:34:56": (True, False, True),
    "12:34:56Z": (True, False, True),
    "12:34:56.5+02:00": (True, False, True),
    "12:34:56+14:00": (True, False, True),
    "12:34:56-14:00": (True, False, True),
    "12:34:56+15:00": (True, False, False),
    "23:59:59.9999999": (True, False, True),
    "12:34": (False, False, False),
    "12:34:60": (False, False, False),
    "1/31/2024": (False, False, False),
    "2024-1-31": (False, False, False),
    "24-01-31": (False, False, False),
    "0001-01-01": (True, True, False),
    "-0001-01-01": (False, False, False),
    "10000-01-01": (False, False, False),
}

TYPES = (ParamType.DATETIME, ParamType.DATE, ParamType.TIME)


@pytest.mark.parametrize("type_", TYPES)
def test_http_fields_take_datetime_parse_forms(type_: ParamType) -> None:
    judged = {text: type_.accepts(text, http=True) for text in HTTP_FORMS}
    assert judged == HTTP_FORMS


@pytest.mark.parametrize("index,type_", list(enumerate(TYPES)))
def test_soap_elements_take_one_xsd_form_per_type(index: int, type_: ParamType) -> None:
    want = {text: read[index] for text, read in SOAP_FORMS.items()}
    assert {text: type_.accepts(text) for text in SOAP_FORMS} == want


def _soap_answer(client: httpx.Client, url: str, operation: str, text: str) -> int:
    envelope = ('<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap='
                '"http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
                f'<{operation} xmlns="http://example.org/dates/"><value>{text}</value>'
                f'</{operation}></soap:Body></soap:Envelope>')
    headers = {"Content-Type": "text/xml; charset=utf-8",
               "SOAPAction": f'"http://example.org/dates/{operation}"'}
    return client.post(f"{url}/Dates.asmx", content=envelope.encode(), headers=headers).status_code


def _answers(url: str) -> dict[tuple[str, str, str], int]:
    """Status of every table row at ``url``: (binding, operation, text) -> status."""
    answers = {}
    with httpx.Client(timeout=30) as client:
        for operation in ("EchoDateTime", "EchoDate", "EchoTime"):
            for text in HTTP_FORMS:
                response = client.get(f"{url}/Dates.asmx/{operation}", params={"value": text})
                answers["get", operation, text] = response.status_code
            for text in SOAP_FORMS:
                answers["soap", operation, text] = _soap_answer(client, url, operation, text)
    return answers


def _expected() -> dict[tuple[str, str, str], int]:
    expected = {}
    for index, operation in enumerate(("EchoDateTime", "EchoDate", "EchoTime")):
        for text, read in HTTP_FORMS.items():
            expected["get", operation, text] = 200 if read else 500
        for text, reads in SOAP_FORMS.items():
            expected["soap", operation, text] = 200 if reads[index] else 500
    return expected


def test_reference_refuses_what_the_tables_refuse() -> None:
    with running(load(DATES / "contract.json")) as url:
        assert _answers(url) == _expected()


@pytest.mark.interop
def test_tables_are_what_the_real_runtime_reads(asmx_home: Path, tmp_path: Path) -> None:
    with real_runtime(asmx_home, DATES, tmp_path / "work") as url:
        assert _answers(url) == _expected()
