"""Which exchanges are mirrored: ``--mirror-operation``/``--skip-operation`` honoured exactly,
and the exchanges there is nothing to compare with (the primary gave no answer).

A skipped operation is never sent to the candidate, not even a request that merely might be
one of its calls: an unclassified request (malformed SOAP, an unknown operation name) to the
endpoint of a skipped operation is not mirrored either, nor is a request the primary took for
a description (a GET of its help page) that carries a body, a SOAPAction or an action: a
candidate dispatching on those could take it for a call. With ``--mirror-operation`` only
classified calls of those operations are mirrored (no service description, nothing
unclassified).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from harness.contract.model import Contract
from harness.http_messages import content_type_params
from harness.traffic.exchange import Exchange, HttpRequest

#: Left off the mirror by the user's choice: counted, not a finding.
SKIPPED = "skipped"
#: Mirrored to no purpose: nothing to hold the candidate's answer against.
UNCOMPARED = "not compared"


@dataclass(frozen=True)
class Choice:
    contract: Contract
    mirror_operations: frozenset[str] = frozenset()
    skip_operations: frozenset[str] = frozenset()

    def why_not(self, exchange: Exchange, raw_url: str | None = None
                ) -> tuple[str, str] | None:
        """(SKIPPED or UNCOMPARED, why) when ``exchange`` (classified by capture's writer:
        its ``meta``; ``raw_url``: its URL as the proxy got it) is not mirrored; None when it
        is."""
        meta = exchange.meta
        operation = meta.get("operation")
        if meta.get("foreign"):
            return SKIPPED, "not a request to the service"
        if operation is not None:
            if operation in self.skip_operations:
                return SKIPPED, f"--skip-operation {operation}"
            if self.mirror_operations and operation not in self.mirror_operations:
                return SKIPPED, f"{operation} is not a --mirror-operation"
        elif self.mirror_operations:
            return SKIPPED, "not a call of a --mirror-operation"
        elif (held := self._skipped_at(exchange)) is not None:
            if "unclassified" in meta:
                return SKIPPED, f"unclassified, to the endpoint of --skip-operation {held}"
            if _may_be_a_call(exchange.request):
                return SKIPPED, (f"a description request with a body or SOAP action, to the "
                                 f"endpoint of --skip-operation {held}")
        if exchange.response is None:
            return UNCOMPARED, "the primary gave no answer"
        if meta.get("truncated"):
            return UNCOMPARED, "a body over --max-body-mb (recorded truncated)"
        if (why := unsendable(raw_url or exchange.request.url)) is not None:
            return UNCOMPARED, why
        return None

    def _skipped_at(self, exchange: Exchange) -> str | None:
        """The skipped operation the request's endpoint holds, if any."""
        for segment in urlsplit(exchange.request.url).path.split("/"):
            endpoint = self.contract.endpoint(segment) if segment.lower().endswith(
                ".asmx") else None
            for op in self.contract.endpoints.get(endpoint or "", ()):
                if op.name in self.skip_operations:
                    return op.name
        return None


def _may_be_a_call(request: HttpRequest) -> bool:
    """Whether a request that is no call to the primary (a description) carries what a call
    does: a body, a SOAPAction header or a Content-Type action (SOAP 1.2)."""
    return bool(request.body) or request.header("SOAPAction") is not None or (
        "action" in content_type_params(request.content_type))


def unsendable(url: str) -> str | None:
    """Why the sending path would send the candidate another request than the client sent,
    if it would: a request target with bytes that are not UTF-8 (sent percent-encoded) or
    with dot segments (``/../``, resolved before sending). Comparing the answers to two
    different requests would be a false difference."""
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return "the request target holds bytes that are not UTF-8 (the mirror would send " \
               "them percent-encoded: another request)"
    if any(segment in (".", "..") for segment in urlsplit(url).path.split("/")):
        return "the request path holds dot segments (the mirror would send it resolved: " \
               "another request)"
    return None
