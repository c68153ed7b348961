"""What the comparison finds: a Difference, with its summary in words."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

#: How an absent Content-Type is written, in every command.
NO_CONTENT_TYPE = "no Content-Type"


@dataclass(frozen=True)
class Difference:
    """One way the actual response differs from the expected one.

    ``summary`` is the difference in words, without the values of one call where it can be
    (no argument, no operation name): the cause text under which the findings of many calls
    are grouped, e.g. "SOAP 1.2 answered with a SOAP 1.1 envelope", "faultcode
    VersionMismatch vs Client, Upgrade header missing", "soap12 binding missing". ``expected``
    and ``actual`` are the exact values, ``path`` where they sit (element path by local names,
    e.g. /Envelope/Body/XResponse/XResult; "" for the HTTP status and headers).
    """

    #: What differs: outcome (a result vs an error) | status | content-type | body | element |
    #: attribute | text | missing | extra | order | wsdl (noise is learned by kind and path)
    kind: str
    path: str
    expected: str | None
    actual: str | None
    warning: bool = False
    summary: str = ""

    @property
    def aspect(self) -> str:
        """The aspect of the answer it belongs to, which diff's and replay's rule IDs follow:
        status (an outcome too), content-type or body."""
        return _ASPECTS.get(self.kind, "body")

    @property
    def prose(self) -> bool:
        """A difference of human prose (a fault's reason or detail, an error message): never
        more than a warning. A fault code is no prose, even refined (a warning too)."""
        if self.path.endswith(("/Fault/faultcode", "/Fault/Code")):
            return False
        return self.warning and ("/Fault/" in self.path or self.kind == "body")

    def describe(self) -> str:
        """One line: the summary, where, and the exact values."""
        where = f" at {self.path}" if self.path else ""
        if self.summary and all(str(v) in self.summary for v in (self.expected, self.actual)):
            return f"{self.summary}{where}"  # the summary names both values already
        return f"{self.summary or self.kind}{where}: expected {_shown(self.expected)}, " \
               f"actual {_shown(self.actual)}"

    def shown(self) -> tuple[str, str]:
        """(expected, actual) as a finding shows them: an absent value said as such, and
        where the values sit when they sit in the body."""
        where = f" (at {self.path})" if self.path else ""
        return tuple(f"{'(none)' if v is None else v}{where}"  # type: ignore[return-value]
                     for v in (self.expected, self.actual))


_ASPECTS = {"outcome": "status", "status": "status", "content-type": "content-type"}


@dataclass(frozen=True)
class Sides:
    """How a comparison names its two answers where the words say which side is off: diff's
    primary and candidate, replay's recording and target."""

    expected: str = "the expected answer"
    actual: str = "the answer"


#: Sides named generically (a comparison whose caller names none).
ANSWERS = Sides()


def _shown(value: str | None) -> str:
    return "nothing" if value is None else repr(value)


def ignored_path(path: str, ignore: Iterable[str]) -> bool:
    """True when the element path matches one of the ``ignore`` patterns (fnmatch)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in ignore)
