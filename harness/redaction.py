"""Pseudonyms for personal data in recordings.

A sensitive value is replaced by ``redacted-`` and 16 hex digits of an HMAC-SHA256 keyed with a
per-recording secret that never enters the recording: the same value maps to the same pseudonym
within a recording (so replays stay consistent) and cannot be looked up without the key.
"""

from __future__ import annotations

import hashlib
import hmac
import re

PSEUDONYM_PREFIX = "redacted-"
_PSEUDONYM = re.compile(r"redacted-[0-9a-f]{16}")


def pseudonym(value: str, key: bytes) -> str:
    digest = hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:16]


def is_pseudonym(text: str | None) -> bool:
    """True for a value written by ``pseudonym``: comparisons treat it as 'any value'."""
    return bool(text) and _PSEUDONYM.fullmatch(text.strip()) is not None  # type: ignore[union-attr]
