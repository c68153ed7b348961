"""The one comparison of two HTTP responses: replay (recorded vs new), diff (primary vs
candidate) and certify's recorded traffic (through replay) all use it.

Every difference is said in words (``Difference.summary``) beside its exact values. What is
compared, in this order:

- the outcome: a result on one side and an error on the other (a SOAP fault, an HTTP error) is
  ONE difference naming the error (fault code and its reason's first line); nothing else is
  compared then, as every other difference would only restate it;
- the status, the Content-Type (media type and charset);
- the body, by what it is. Two SOAP envelopes: their version (a SOAP 1.1 envelope where SOAP 1.2
  is expected is one difference; the rest is compared as if the versions matched), their header
  blocks, their faults by code (version-neutral; the reason and detail are prose: warnings only),
  their payloads. Two WSDLs as contracts (``wsdl``). A text/plain answer
  against an XML document holding one value, by the value: the form is the difference, named on
  the Content-Type. Other XML structurally, other bodies byte for byte.

XML is aligned by namespace and local name, never by position: same-named siblings (arrays) are
compared in order, a sibling missing on one side is named as missing. Prefixes, whitespace-only
text, the XML declaration and attribute order do not matter, nor the prefix of a QName value such
as ``soap:Client``.

The package: ``difference`` (what is found), ``responses`` (two HTTP responses: outcome,
status, Content-Type, the bodies' forms), ``xml`` (two XML documents, SOAP envelopes and faults
included), ``wsdl`` (two WSDLs as contracts).
"""

from harness.judge.compare.difference import NO_CONTENT_TYPE, Difference, Sides, ignored_path
from harness.judge.compare.responses import compare_responses
from harness.judge.compare.xml import SOAP_VERSIONS, WSDL_NS

__all__ = ["NO_CONTENT_TYPE", "SOAP_VERSIONS", "WSDL_NS", "Difference", "Sides",
           "compare_responses", "ignored_path"]
