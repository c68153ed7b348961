"""The one hardened XML parser: refuses DTDs, entities, over-size and malformed input with a
one-line XMLRejected; parses ordinary XML."""

from __future__ import annotations

import time

import pytest

from harness.contract.xmlsafe import (
    MAX_XML_BYTES,
    element_children,
    local_name,
    namespace,
    parse_xml,
    utf8_by_its_start,
)
from harness.errors import HarnessError, XMLRejected

SECRET = "ENTITY-VALUE-MUST-NOT-APPEAR"
BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>"""

HOSTILE = {
    "doctype": b'<?xml version="1.0"?><!DOCTYPE r><r/>',
    "doctype without declaration": b"<!DOCTYPE r SYSTEM 'r.dtd'><r/>",
    "external entity": (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM '
                        b'"file:///etc/passwd">]><r>&x;</r>'),
    "external parameter entity": (b'<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd">'
                                  b"%p;]><r/>"),
    "internal entity": f'<!DOCTYPE r [<!ENTITY e "{SECRET}">]><r>&e;</r>'.encode(),
    "billion laughs": BILLION_LAUGHS,
    "doctype after a long comment": b"<!--" + b"x" * 8000 + b'--><!DOCTYPE r [<!ENTITY e "'
                                    + SECRET.encode() + b'">]><r>&e;</r>',
    "plain doctype after a long comment": b"<!--" + b"x" * 8000 + b"--><!DOCTYPE r><r/>",
    "UTF-16 billion laughs": BILLION_LAUGHS.decode().replace(
        '<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16"),
    "UTF-16 with DOCTYPE": ('<?xml version="1.0" encoding="UTF-16"?>'
                            f'<!DOCTYPE r [<!ENTITY e "{SECRET}">]><r>&e;</r>').encode("utf-16"),
    "UTF-16LE without BOM with DOCTYPE": ('<?xml version="1.0" encoding="UTF-16LE"?>'
                                          "<!DOCTYPE r><r/>").encode("utf-16-le"),
    "UTF-32 with DOCTYPE": f'<!DOCTYPE r [<!ENTITY e "{SECRET}">]><r>&e;</r>'.encode("utf-32"),
}

MALFORMED = {
    "empty": b"",
    "whitespace only": b" \r\n\t",
    "not XML": b"this is not XML",
    "unclosed tag": b"<r><a></r>",
    "truncated": b"<r>",
    "two roots": b"<r/><s/>",
    "undeclared entity": b"<r>&undeclared;</r>",
    "unbound prefix": b"<p:r/>",
    "bad encoding": b'<?xml version="1.0" encoding="utf-8"?><r>\xff\xfe</r>',
}


def assert_one_line_rejection(data: bytes | str, **kwargs) -> str:
    with pytest.raises(XMLRejected) as info:
        parse_xml(data, **kwargs)
    message = str(info.value)
    assert message and "\n" not in message
    assert SECRET not in message
    assert isinstance(info.value, HarnessError)
    return message


@pytest.mark.parametrize("case", list(HOSTILE))
def test_refuses_dtds_and_entities(case: str) -> None:
    started = time.perf_counter()
    message = assert_one_line_rejection(HOSTILE[case])
    assert "DOCTYPE" in message or "entity" in message
    # No hard timing target (benchmarks do that): this only catches an exponential blow-up.
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("case", list(MALFORMED))
def test_refuses_malformed_input(case: str) -> None:
    assert_one_line_rejection(MALFORMED[case])


def test_refuses_over_size_input_before_parsing() -> None:
    small = b"<r>" + b"x" * 100 + b"</r>"
    message = assert_one_line_rejection(small, max_bytes=50)
    assert "50" in message and str(len(small)) in message
    assert parse_xml(small, max_bytes=len(small)).text == "x" * 100  # the limit is inclusive


def test_default_size_limit() -> None:
    assert MAX_XML_BYTES == 4 * 1024 * 1024
    at_limit = b"<r>" + b"x" * (MAX_XML_BYTES - 7) + b"</r>"
    assert len(at_limit) == MAX_XML_BYTES
    assert len(parse_xml(at_limit).text) == MAX_XML_BYTES - 7
    message = assert_one_line_rejection(at_limit + b" ")
    assert str(MAX_XML_BYTES) in message


@pytest.mark.parametrize("data", [
    b'<?xml version="1.0" encoding="utf-8"?>\n<r xmlns="urn:x"><a>1</a><!-- c --><b>2</b></r>',
    b'<r xmlns="urn:x"><a>1</a><!-- c --><b>2</b></r>',
    '<?xml version="1.0" encoding="utf-8"?><r xmlns="urn:x"><a>1</a><!-- c --><b>2</b></r>',
    '<?xml version="1.0" encoding="UTF-16"?><r xmlns="urn:x"><a>1</a><!-- c --><b>2</b></r>'
    .encode("utf-16"),
], ids=["with declaration", "without declaration", "str with declaration", "UTF-16"])
def test_accepts_ordinary_xml(data: bytes | str) -> None:
    root = parse_xml(data)
    assert (namespace(root), local_name(root)) == ("urn:x", "r")
    assert [(local_name(c), c.text) for c in element_children(root)] == [("a", "1"), ("b", "2")]


def test_keeps_non_ascii_and_escaped_text() -> None:
    root = parse_xml("<r a=\"&quot;\">طالب &lt;a&amp;b&gt; &#233;</r>".encode())
    assert root.text == "طالب <a&b> é"
    assert root.get("a") == '"'
    assert namespace(root) is None


def test_predefined_and_character_references_are_not_entities() -> None:
    assert parse_xml(b"<r>&amp;&lt;&gt;&apos;&quot;&#x41;</r>").text == "&<>'\"A"


@pytest.mark.parametrize(("data", "utf8"), [
    (b'<?xml version="1.0" encoding="utf-8"?><r/>', True),
    (b'<?xml version="1.0"?><r/>', True),
    (b"<soap:Envelope/>", True),
    (b'<?xml version="1.0" encoding="UTF-7"?><r/>', False),  # "<!" can hide as "+ADwAIQ-"
    (b'<?xml version="1.0" encoding="utf-8" standalone="yes"?><r/>', False),  # ask libxml2
    ("<r/>".encode("utf-16-le"), False),
    ("<r/>".encode("utf-16"), False),
    (b"\xef\xbb\xbf<r/>", False),
    (b"<!--c--><r/>", False),
    (b"<", False),
    (b"", False),
])
def test_utf8_is_told_by_the_first_bytes_only_when_they_leave_no_doubt(data: bytes,
                                                                        utf8: bool) -> None:
    """Parsing skips asking libxml2 for the encoding (a microsecond per message) only when the
    first bytes make the document UTF-8; whatever they leave open, the parsed tree answers."""
    assert utf8_by_its_start(data) is utf8

