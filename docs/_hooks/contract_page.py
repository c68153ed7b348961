"""The School Mobile contract page (``<!-- generated: contract -->``) and the links from the
rule tables to its clauses (``clause_links``).

The operations, endpoints, parameters and bindings come from the shipped contract
(``harness.contract.model.school_mobile()``) and from the requests the harness builds for it;
each clause a rule cites is said here in our own words (``CLAUSES``), under an anchor the rule
tables link to. A rule citing a clause this page does not hold fails the build (and
tests/test_docs.py before it).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: Each clause of the spec a rule cites, in our words: (heading, what it asks).
CLAUSES: dict[str, tuple[str, str]] = {
    "4.1": ("Bindings common to all operations",
            "Every operation is offered over the four bindings below, built the same way for "
            "each; a request that is none of them (no operation, a binding the contract does "
            "not offer) cannot be judged and is reported as `UNCLASSIFIED`."),
    "4.1 table": ("The shape of each binding's request",
                  "SOAP 1.1 and SOAP 1.2 post an envelope to the endpoint itself, with their "
                  "own Content-Type and envelope namespace; the Body holds one element named "
                  "after the operation, in the service namespace, whose children are the "
                  "parameters. HTTP GET puts the parameters in the query string of "
                  "`endpoint/Operation`; HTTP POST sends them as a form to the same path."),
    "4.1 rule 1": ("SOAPAction of SOAP 1.1",
                   "A SOAP 1.1 request names its operation in the `SOAPAction` header: the "
                   "service namespace, one `/`, the operation name, in double quotes."),
    "4.1 rule 2": ("No SOAPAction in SOAP 1.2",
                   "A SOAP 1.2 request has no `SOAPAction` header (the version travels in the "
                   "Content-Type)."),
    "4.1 rule 3": ("Content-Length and Host",
                   "Every request says how long its body is, truthfully, and names the host "
                   "it is sent to."),
    "4.1 rule 4": ("A successful call is HTTP 200",
                   "A call the service carried out is answered with status 200; anything else "
                   "is a failed call."),
    "4.1 rule 5": ("The answer's envelope and response element",
                   "A SOAP answer comes in the envelope version of its request, and its Body "
                   "holds `<Operation>Response` in the service namespace."),
    "4.1 rule 6": ("Empty response elements",
                   "Only GetTokenDevice returns something; every other operation's "
                   "`<Operation>Response` is empty."),
    "4.1 rule 7": ("The SOAP answer's Content-Type",
                   "`text/xml; charset=utf-8` for SOAP 1.1, `application/soap+xml; "
                   "charset=utf-8` for SOAP 1.2."),
    "4.1 rule 8": ("GET and POST answers without a result",
                   "An HTTP GET or POST call of an operation that returns nothing is answered "
                   "200 with no body (GetTokenDevice aside: clause 4.7)."),
    "4.1 rule 9": ("Parameters: names, order and types",
                   "Parameters are named exactly as the operation lists them; in SOAP they are "
                   "child elements in the listed order, each carrying a value of its type; "
                   "over GET and POST every value is text, `id_row_central` included."),
    "4.2-4.9": ("Each operation at its endpoint",
                "Each operation is served at its own `.asmx` endpoint (table below); "
                "SendNotificationType and SendMarkNotes share one."),
    "4.7": ("GetTokenDevice's result",
            "The one operation with a result: over SOAP a `GetTokenDeviceResult` string inside "
            "the response element; over GET and POST a `text/xml` document whose root is "
            "`string` in the service namespace, holding the token."),
    "4.10": ("What the spec leaves open: values",
             "Formats, allowed values and optionality of the parameters are not given, nor "
             "what the empty results would hold. The harness therefore does not fail a refusal "
             "of unusual values where plain values are accepted (it warns)."),
    "7": ("Errors",
          "The spec describes no error answer: no fault shape, status or code. What the harness "
          "holds an error answer to is that it leaks nothing of the implementation (stack "
          "frames, exception types, framework versions)."),
    "9.1": ("SOAP versions told apart by Content-Type",
            "SOAP 1.1 and SOAP 1.2 share every path; the request's Content-Type alone says "
            "which version is spoken, and the answer follows it."),
    "9.2": ("No version in the path",
            "No path carries a version segment (`/v1/`...)."),
}

#: Where the spec is silent and a rule holds the service to what ASMX itself does.
SILENT = "where-the-spec-is-silent"
SILENT_WORDS = (
    "The spec says nothing of a WSDL, of error answers, of requests outside the shapes above "
    "(another Content-Type or charset, names in another case, a parameter twice or missing, "
    "another method) or of how the empty results are written. There the real ASP.NET ASMX "
    "runtime is the judge: the rules citing *as ASMX* hold a deployment to what ASMX answers "
    "(its `?WSDL` documents, WSDL 1.1 as it publishes them; the behaviour of "
    "`harness/contract/asmx_matrix.json`, measured on the runtime), and a difference from it "
    "is a warning unless a value is lost or a clause above is broken. A WSDL itself is "
    "optional: hardened deployments remove the Documentation protocol, so a missing one is a "
    "warning (`--require-wsdl` makes it a failure).")

#: A clause cell's parts: words holding the service to ASMX, a list of 4.1's rules, a clause.
_PARTS = re.compile(r"(?P<silent>WSDL 1\.1 as ASMX[^;]*|(?:else )?as ASMX[^;]*|optional \([^)]*\))"
                    r"|(?P<rules>4\.1 rules? \d+(?:, \d+)*)"
                    r"|(?P<clause>4\.1 table|4\.2-4\.9|\b\d+(?:\.\d+)?\b)")


def anchor(clause: str) -> str:
    """The page's anchor of a clause: ``4.1 rule 5`` -> ``clause-4-1-rule-5``."""
    return "clause-" + re.sub(r"[^0-9a-z]+", "-", clause.lower()).strip("-")


def cited(text: str) -> list[str]:
    """The clauses a rule's clause cell cites (``4.1 rules 5, 7; else as ASMX`` -> ``4.1 rule
    5``, ``4.1 rule 7``); a ValueError for a clause the page does not hold."""
    found: list[str] = []
    for part in _PARTS.finditer(text):
        if part["rules"]:
            found += [f"4.1 rule {n}" for n in re.findall(r"\d+", part["rules"][3:])]
        elif part["clause"]:
            found.append(part["clause"])
    unknown = [clause for clause in found if clause not in CLAUSES]
    if unknown:
        raise ValueError(f"clause {unknown[0]!r} (in {text!r}) is not on the School Mobile "
                         "contract page: add it to docs/_hooks/contract_page.py's CLAUSES")
    return found


def clause_links(text: str, page: str = "school-mobile.md") -> str:
    """A rule table's clause cell with each clause it cites linked to its section of the
    contract page, and words about ASMX to the section on where the spec is silent."""
    cited(text)  # every clause is on the page, or the build fails

    def link(part: re.Match[str]) -> str:
        if part["silent"]:
            return f"[{part['silent']}]({page}#{SILENT})"
        if part["rules"] and not part["rules"].startswith("4.1 rules"):
            return f"[{part['rules']}]({page}#{anchor(part['rules'])})"
        if part["rules"]:
            return re.sub(r"(?<=[ ,])\d+", lambda n: f"[{n.group()}]({page}#"
                          f"{anchor('4.1 rule ' + n.group())})", part["rules"])
        return f"[{part['clause']}]({page}#{anchor(part['clause'])})"

    return _PARTS.sub(link, text)


def contract_page() -> str:
    """The page's generated part: endpoints and operations, bindings as built, clauses."""
    from harness.contract.bindings import Binding, build_request
    from harness.contract.model import sample_arguments, school_mobile

    contract = school_mobile()
    namespace = contract.namespace
    out = [f"Service namespace: `{namespace}` (the default of `--namespace`; a deployment under "
           "another one is certified with `--namespace URI`). "
           f"{len(contract.operations)} operations on {len(contract.endpoints)} endpoints, each "
           "over the four bindings.", "",
           "## Operations", "",
           "| operation | clause | endpoint | parameters | result |", "|---|---|---|---|---|"]
    for op in contract.operations:
        params = ", ".join(f"`{p.name}` {p.type.value}" + (" (personal data)" if p.sensitive
                                                           else "")
                           for p in op.parameters) or "none"
        result = (f"`{op.result_element}` {op.result}"
                  + (" (personal data)" if op.result_sensitive else "")) if op.result else \
            f"none: `{op.response_element}` is empty"
        here = "" if op.clause in CLAUSES else f'<span id="{anchor(op.clause)}"></span>'
        out.append(f"| {here}`{op.name}` | {op.clause} | `{op.endpoint}` | {params} | "
                   f"{result} |")
    out += ["", "*Personal data*: redacted in recordings and shown as pseudonyms in reports "
            "([Recordings, redaction, HAR](../recordings.md)).", "",
            '## Bindings {#clause-4-1}', "", _cell(CLAUSES["4.1"][1]), "",
            "Each binding as the harness builds it, for an operation of each kind "
            "(what `harness call OPERATION --all-bindings` sends):", ""]
    for op in (contract.find("GetTokenDevice"), contract.find("LogoutFromSchool")):
        out += [f"| {op.name} | method | path | Content-Type | SOAPAction |",
                "|---|---|---|---|---|"]
        for binding in (Binding(b) for b in contract.bindings_of(op)):
            request = build_request(contract, op, sample_arguments(op, 0, binding.value),
                                    binding, "http://host")
            path = urlsplit(request.url).path
            out.append(f"| {binding.label} | {request.method} | `{path}` | "
                       f"{_code(request.header('Content-Type'))} | "
                       f"{_code(request.header('SOAPAction'))} |")
        out.append("")
    out += ["## Clauses", "",
            "Each clause a rule cites, in our words; the rules citing it are in "
            "[Rules](rules.md).", ""]
    for clause, (title, words) in CLAUSES.items():
        if clause == "4.1":
            continue
        out += [f"### {clause}: {title} {{#{anchor(clause)}}}", "", words, ""]
    out += [f"## Where the spec is silent {{#{SILENT}}}", "", SILENT_WORDS, ""]
    return "\n".join(out)


def _code(value: str | None) -> str:
    return f"`{value}`" if value else "none"


def _cell(text: str) -> str:
    return text.replace("|", "&#124;")
