"""The one hardened XML parser of the harness. Every XML read in the project goes through it.

No DTD (a DOCTYPE is refused outright, so no entity can be declared, internal or external),
no entity expansion, no network access, a size limit and a limit on the number of tags checked
before parsing (a few MB of empty elements would otherwise take seconds and hundreds of MB to
build), and a one-line error for anything malformed.
"""

from __future__ import annotations

import contextlib

from lxml import etree

from harness.errors import MalformedXML, XMLRejected

#: Default size limit for one XML document (a request or response body).
MAX_XML_BYTES = 4 * 1024 * 1024
#: Default limit on the markup of one document, counted as its ``<`` characters (an upper bound
#: of its elements): 900k empty elements in 3.6 MB took ~2 s and ~300 MB to parse; 50k take
#: ~0.1 s. Far above any SOAP message or WSDL of a service.
MAX_XML_TAGS = 50_000

_PARSER = etree.XMLParser(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    dtd_validation=False,
    huge_tree=False,
    remove_pis=False,
    collect_ids=False,
)


def parse_xml(data: bytes | str, *, max_bytes: int = MAX_XML_BYTES,
              max_tags: int = MAX_XML_TAGS) -> etree._Element:
    """Parse ``data`` into its root element, or raise XMLRejected naming the problem."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise XMLRejected(f"XML document of {len(data)} bytes exceeds the {max_bytes}-byte limit")
    if not data or data.isspace():
        raise XMLRejected("XML document is empty")
    if (tags := data.count(b"<")) > max_tags:  # C speed: a few ms for 4 MB
        raise XMLRejected(f"XML document has {tags} tags, over the {max_tags}-tag limit")
    # Quick refusal before libxml2 reads a DTD at all (both markers start with "<!", which most
    # documents lack: no upper-cased copies then); the docinfo check below catches encodings
    # where the marker is not ASCII.
    declares = b"<!" in data  # (asked once: lint parses two documents an exchange)
    if declares and (b"<!DOCTYPE" in data[:4096].upper() or b"<!ENTITY" in data.upper()):
        raise XMLRejected("XML document has a DOCTYPE or entity declaration, which is refused")
    try:
        root = etree.fromstring(data, parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise MalformedXML(f"malformed XML: {_one_line(str(exc))}") from None
    except ValueError as exc:  # e.g. a str with an encoding declaration
        raise MalformedXML(f"malformed XML: {_one_line(str(exc))}") from None
    utf8 = utf8_by_its_start(data)
    if utf8 and not declares and b"&" not in data:
        # A UTF-8 document writes "<!DOCTYPE" as those ASCII bytes and an entity reference
        # with an "&": with neither, libxml2's document info (a tree and an object more per
        # parse, lint's two per exchange) has nothing to add to the checks above.
        return root
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise XMLRejected("XML document has a DOCTYPE or entity declaration, which is refused")
    # A last check, behind the refused DTD: no entity reference survived. One needs an "&",
    # the byte 0x26 in UTF-8, UTF-16/32 and the ASCII-based encodings; without that byte (and
    # without another declared encoding, e.g. EBCDIC) the tree walk, a good part of parsing a
    # small SOAP message, is skipped.
    if ((b"&" in data or (not utf8
                          and (docinfo.encoding or "").lower() not in _ASCII_SUPERSETS))
            and _has_entity_reference(root)):
        raise XMLRejected("XML document has an unresolved entity reference, which is refused")
    return root


#: Encodings (as libxml2 reports them) in which "&" is the byte 0x26 and nothing else is.
_ASCII_SUPERSETS = frozenset({"utf-8", "us-ascii", "ascii", "iso-8859-1", "latin-1", "latin1",
                              "windows-1252"})


#: XML declarations of UTF-8 documents as most clients and ASP.NET write them.
_UTF8_DECLARATIONS = (b'<?xml version="1.0" encoding="utf-8"?>',
                      b'<?xml version="1.0" encoding="UTF-8"?>', b'<?xml version="1.0"?>')


def utf8_by_its_start(data: bytes) -> bool:
    """True when a document's first bytes make it UTF-8: it starts with a common UTF-8
    declaration, or with an element and no declaration or byte-order mark at all. (False
    says nothing: ask the parsed tree's ``docinfo.encoding``, which costs a microsecond.)"""
    return data.startswith(_UTF8_DECLARATIONS) or (
        data[:1] == b"<" and data[1:2] not in (b"?", b"\x00", b"!", b""))


def root_tag(data: bytes) -> str | None:
    """The root element's tag (``{ns}name``) as far as a streaming read gets before the
    document breaks, or None when not even the root's start tag can be read (no XML, a DTD,
    empty). What a peeking reader such as ASMX's sees of a malformed document."""
    if not data.strip() or (b"<!" in data and b"<!DOCTYPE" in data[:4096].upper()):
        return None
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True,
                                 load_dtd=False, huge_tree=False)
    with contextlib.suppress(etree.XMLSyntaxError):  # the events read before the break count
        parser.feed(data[:64 * 1024])  # the root's start tag, not the document
    for _, element in parser.read_events():
        return element.tag if isinstance(element.tag, str) else None
    return None


def _has_entity_reference(root: etree._Element) -> bool:
    return any(isinstance(node, etree._Entity) for node in root.iter(etree.Entity))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def local_name(element: etree._Element) -> str:
    tag = element.tag
    if isinstance(tag, str):  # "{ns}name" or "name": read without building a QName
        return tag[tag.index("}") + 1:] if tag[:1] == "{" else tag
    return etree.QName(element).localname


def namespace(element: etree._Element) -> str | None:
    tag = element.tag
    if isinstance(tag, str):
        return tag[1:tag.index("}")] if tag[:1] == "{" else None
    return etree.QName(element).namespace


def element_children(element: etree._Element) -> list[etree._Element]:
    """Child elements only (comments and processing instructions skipped)."""
    return [child for child in element if isinstance(child.tag, str)]
