"""The harness's exception hierarchy.

Every error a user can cause (bad flag, hostile XML, unreachable target, broken recording)
is a HarnessError whose message is one line naming the problem; the CLI prints it and exits 2.
"""


class HarnessError(Exception):
    """Base of every error the harness reports to its user."""

    exit_code = 2


class UsageError(HarnessError):
    """A wrong flag, option value or argument combination."""


class XMLRejected(HarnessError):
    """XML that the hardened parser refuses: malformed, DTD, entities, or too large."""


class MalformedXML(XMLRejected):
    """XML that is not well-formed (as opposed to refused for a DTD, an entity or its size)."""


class TargetUnreachable(HarnessError):
    """The target service cannot be reached (refused, DNS, timeout), or it closed the
    connection without an answer (``hung_up``: it is there, the request made it hang up)."""

    def __init__(self, message: str, *, hung_up: bool = False) -> None:
        super().__init__(message)
        self.hung_up = hung_up


class NotSendable(TargetUnreachable):
    """A recorded request HTTP cannot carry (a URL over 64 KiB, a line break in a header
    value): never sent, so never answered. Every command that sends reports it as it
    reports a request the target did not answer: for that request alone, the run goes on."""


class NotTheService(HarnessError):
    """The target answers every call of the service with 404 or an HTML page: a wrong base
    URL, a setup error (exit 2, one line), not the product's failures."""


class NothingJudged(HarnessError):
    """A run that judged nothing (no usable exchange, a selection nothing matched): not a
    pass, a setup error (exit 2, one line saying what was read and why none was judged)."""


class RecordingError(HarnessError):
    """A recording or HAR file that cannot be read or written."""


class ClassificationError(HarnessError):
    """An HTTP request that is none of the contract's operation x binding pairs."""


class RunStopped(HarnessError):
    """The run must end now (exit 2): e.g. several requests in a row got no answer."""


class TLSFailure(RunStopped):
    """The target's TLS is refused (unknown CA, wrong host name, no TLS at all)."""


class AuthenticationFailed(RunStopped):
    """The target refused the run's credentials, or asked for some the run does not have
    (HTTP 401, a WS-Security fault, a login that set no cookie): one line naming what it
    asked for, exit 2."""


class ResponseTooLarge(HarnessError):
    """A response body outgrew --max-response-mb while streaming in (counted decoded).

    Not fatal: each command reports it as a finding (``harness.judge.sending.size_finding``)."""

    def __init__(self, method: str, url: str, limit: int) -> None:
        super().__init__(f"response larger than {limit / 1024 / 1024:g} MB "
                         f"(--max-response-mb) to {method} {url}")
        self.method, self.url, self.limit = method, url, limit

    def __reduce__(self):  # picklable across replay's worker processes
        return (type(self), (self.method, self.url, self.limit))


class ServiceDescription(ClassificationError):
    """A request for a service description (WSDL, XSD, disco, help page, script proxy): traffic
    to count, not a call to judge. ``kind`` names which."""

    def __init__(self, kind: str, path: str) -> None:
        super().__init__(f"service description ({kind}) at {path}")
        self.kind = kind
