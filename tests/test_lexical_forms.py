"""Which texts ASMX reads, per binding and XSD type: the R9-<TYPE> checks (``ParamType.accepts``)
and the reference's refusals agree with ASP.NET. The tables were recorded from the real runtime
(Mono 6.8) serving tests/services/lexical, and the interop lane re-records them against it:
dates here, every other simple type in tests/services/lexical/observed.json
(``python tests/test_lexical_forms.py URL`` writes it anew from a deployment of that folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape

import httpx
import pytest
from asmx_runtime import real_runtime

from harness.contract.model import ParamType, load
from harness.reference.server import running

LEXICAL = Path(__file__).parent / "services" / "lexical"
OBSERVED = LEXICAL / "observed.json"
NAMESPACE = "http://example.org/lexical/"

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


def _soap_answer(client: httpx.Client, url: str, endpoint: str, operation: str,
                 text: str) -> int:
    envelope = ('<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap='
                '"http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
                f'<{operation} xmlns="{NAMESPACE}"><value>{escape(text)}</value>'
                f'</{operation}></soap:Body></soap:Envelope>')
    headers = {"Content-Type": "text/xml; charset=utf-8",
               "SOAPAction": f'"{NAMESPACE}{operation}"'}
    return client.post(f"{url}{endpoint}", content=envelope.encode(),
                       headers=headers).status_code


def _read(client: httpx.Client, url: str, endpoint: str, operation: str, text: str, *,
          http: bool) -> bool:
    """Whether the deployment at ``url`` reads ``text`` as the operation's one parameter."""
    if http:
        status = client.get(f"{url}{endpoint}/{operation}", params={"value": text}).status_code
    else:
        status = _soap_answer(client, url, endpoint, operation, text)
    return status == 200


# ------------------------------------------------------------------------ dates


DATE_OPERATIONS = ("EchoDateTime", "EchoDate", "EchoTime")


def _date_answers(url: str) -> dict[tuple[str, str, str], bool]:
    with httpx.Client(timeout=30) as client:
        return {**{("get", op, text): _read(client, url, "/Dates.asmx", op, text, http=True)
                   for op in DATE_OPERATIONS for text in HTTP_FORMS},
                **{("soap", op, text): _read(client, url, "/Dates.asmx", op, text, http=False)
                   for op in DATE_OPERATIONS for text in SOAP_FORMS}}


def _date_tables() -> dict[tuple[str, str, str], bool]:
    return {**{("get", op, text): read for op in DATE_OPERATIONS
               for text, read in HTTP_FORMS.items()},
            **{("soap", op, text): reads[i] for i, op in enumerate(DATE_OPERATIONS)
               for text, reads in SOAP_FORMS.items()}}


# ----------------------------------------------------------- every other simple type

#: Texts tried on every operation of Forms.asmx: edges of each type's range, signs, grouping,
#: infinities, enumeration and base64 forms, GUID formats, whitespace, non-ASCII digits.
TEXTS = (
    "0", "42", "-7", "+7", " 42 ", "  +7  ", "007", "-0", "5-", "(5)", "1,000", "1,0",
    "12,34,567", "1,234.5", "1,234,", ",123", ",", "1_000", "0x10", "1 000", "١٢", "٣",
    "1e3", "1E3", "1,0e3", "1e", "e5", "1.5", "1.", ".5", "-.5", "+.5", "1.0",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "255", "256",
    "-128", "-129", "127", "128", "65535", "65536", "32767", "-32768",
    "79228162514264337593543950335", "79228162514264337593543950336",
    "-79228162514264337593543950335", "79228162514264337593543950335.5",
    "0.0000000000000000000000000001", "1.00000000000000000000000000001",
    "true", "false", "True", "FALSE", "tRuE", " true ", "1", "0", "1 ", "yes",
    "INF", "-INF", "+INF", "NaN", " NaN ", "-NaN", "Infinity", "-Infinity", "+Infinity",
    "infinity", "inf", "nan", "1.7976931348623157E+308", "1e309", "1.5e-400",
    "3.4028235E+38", "3.40282356e38", "3.4028236e38", "-3.4028236e38", "1e39", "1e-50",
    "A", "AB", "", " ", "\t", "65", "م", "&",
    "Red", "red", "RED", "Blue", " Red", "Purple", "3", "99", "-1", "Red,Blue", "Red, Blue",
    "Red , Green", "Red,", "Red;Blue", "1,2", "Red,1",
    "AQID", "AQI=", "AQ==", "AQ", "AQI", "AQIDBA", "AQIDB", "AQ=", "=AQ", "A=B", "====",
    "A===", "AQ==AQ==", "AQ ID", "AQ\nID", "a b", "!!!!", "/", "_-", "é",
    "0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB-469F-A165-70867728950E",
    " 0f8fad5b-d9cb-469f-a165-70867728950e ", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
    "(0f8fad5b-d9cb-469f-a165-70867728950e)", "0f8fad5bd9cb469fa16570867728950e",
    "{0f8fad5bd9cb469fa16570867728950e}", "0f8fad5b-d9cb469f-a165-70867728950e",
    "{0x0f8fad5b,0xd9cb,0x469f,{0xa1,0x65,0x70,0x86,0x77,0x28,0x95,0x0e}}", "zz",
    # Padding .NET does not take for white space (Python's str.strip does): no-break, em and
    # ideographic spaces, NEL; vertical tab and form feed (white to Int32.Parse, not to XML);
    # a trailing NUL (Int32.Parse ignores trailing NULs).
    "\u00a01", "1\u00a0", "\u20031", "1\u2003", "\u30001", "1\u3000", "\u00851", "1\u0085",
    "\x0b1", "1\x0c", "1\x00", "\u00a0true", "Red\u3000", "\u00a0AQID",
)


def _forms() -> list:
    contract = load(LEXICAL / "contract.json")
    return [op for op in contract.operations if op.endpoint == "/Forms.asmx"]


def _form_answers(url: str) -> dict[str, dict[str, list[bool | None]]]:
    """operation -> text -> [read over SOAP, read over GET (None: no GET binding)]."""
    answers: dict[str, dict[str, list[bool | None]]] = {}
    with httpx.Client(timeout=30) as client:
        for op in _forms():
            has_get = "get" in (op.bindings or ("get",))
            answers[op.name] = {text: [
                _read(client, url, op.endpoint, op.name, text, http=False),
                _read(client, url, op.endpoint, op.name, text, http=True) if has_get else None]
                for text in TEXTS}
    return answers


def _observed() -> dict[str, dict[str, list[bool | None]]]:
    return json.loads(OBSERVED.read_text(encoding="utf-8"))


def test_every_type_reads_what_asmx_reads() -> None:
    observed = _observed()
    judged = {op.name: {text: [op.parameters[0].accepts(text),
                               op.parameters[0].accepts(text, http=True)
                               if reads[1] is not None else None]
                        for text, reads in observed[op.name].items()}
              for op in _forms()}
    assert judged == observed


def test_reference_refuses_what_the_tables_refuse() -> None:
    with running(load(LEXICAL / "contract.json")) as url:
        assert _date_answers(url) == _date_tables()
        assert _form_answers(url) == _observed()


@pytest.mark.interop
def test_tables_are_what_the_real_runtime_reads(asmx_home: Path, tmp_path: Path) -> None:
    with real_runtime(asmx_home, LEXICAL, tmp_path / "work") as url:
        assert _date_answers(url) == _date_tables()
        assert _form_answers(url) == _observed()


def _dumps(answers: dict[str, dict[str, list[bool | None]]]) -> str:
    """JSON with a line per operation x text, for people and diffs."""
    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)
    operations = [f" {dump(op)}: {{\n" + ",\n".join(f"  {dump(text)}: {dump(reads)}"
                                                   for text, reads in texts.items()) + "\n }"
                  for op, texts in answers.items()]
    return "{\n" + ",\n".join(operations) + "\n}\n"


if __name__ == "__main__":  # record observed.json from a deployment of tests/services/lexical
    OBSERVED.write_text(_dumps(_form_answers(sys.argv[1])), encoding="utf-8")


def _certify(tmp_path: Path, *target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", "certify", "--contract", str(LEXICAL / "contract.json"),
         "--report-dir", str(tmp_path / "reports"), "--no-html", *target],
        capture_output=True, text=True, timeout=900, check=False)


def test_certify_of_every_type_passes_on_the_reference(tmp_path: Path) -> None:
    done = _certify(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.interop
def test_certify_of_every_type_passes_on_the_real_runtime(asmx_home: Path,
                                                           tmp_path: Path) -> None:
    with real_runtime(asmx_home, LEXICAL, tmp_path / "work") as url:
        done = _certify(tmp_path, "--target", url)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.parametrize("text", ["1/" * 300_000, "9" * 1_000_000, "1," * 500_000,
                                  "A" * 1_000_000 + "=", "\x00" * 1000, "٣" * 1000])
def test_hostile_values_get_a_verdict(text: str) -> None:
    """Huge or odd values are judged like any other (a date of 300,000 parts is no date)."""
    for type_ in ParamType:
        if type_.is_simple:
            for http in (False, True):
                assert type_.accepts(text, ("Red",), http=http) in (True, False)
    assert not ParamType.DATETIME.accepts("1/" * 300_000, http=True)
