"""ASMX conformance harness: capture, replay, lint, certify and diff School Mobile traffic.

The public API is small; most users drive it through the ``harness`` command.
"""

from harness.errors import (
    HarnessError,
    RecordingError,
    TargetUnreachable,
    UsageError,
    XMLRejected,
)

__version__ = "0.1.0"

__all__ = [
    "HarnessError",
    "RecordingError",
    "TargetUnreachable",
    "UsageError",
    "XMLRejected",
    "__version__",
]
