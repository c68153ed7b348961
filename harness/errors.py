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


class TargetUnreachable(HarnessError):
    """The target service cannot be reached (refused, DNS, timeout)."""


class RecordingError(HarnessError):
    """A recording or HAR file that cannot be read or written."""


class ClassificationError(HarnessError):
    """An HTTP request that is none of the contract's operation x binding pairs."""


class ServiceDescription(ClassificationError):
    """A request for a service description (WSDL, XSD, disco, help page, script proxy): traffic
    to count, not a call to judge. ``kind`` names which."""

    def __init__(self, kind: str, path: str) -> None:
        super().__init__(f"service description ({kind}) at {path}")
        self.kind = kind
