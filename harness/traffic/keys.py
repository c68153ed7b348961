"""Pseudonym keys: where capture keeps a recording's key, and how every command finds it.

A redacted recording names its key by a fingerprint (``key_id`` in its header's
``redaction``), never the key itself. Capture keeps the key in a per-user key store, out of
any working tree (so ``git add -A`` cannot commit it), one file per key named by that
fingerprint: ``$XDG_DATA_HOME/harness/keys/<key id>.key`` (``~/.local/share/harness/keys``
without XDG_DATA_HOME; ``HARNESS_KEY_STORE`` names another folder), folder 0700, files 0600.
Every command that reads a recording finds its key there by the header's ``key_id``, without
a flag; ``--key-file`` names one anywhere else. A key file beside the recording
(``<recording>.key``, where capture kept keys before) is still found and used.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import RecordingError, UsageError

#: Names the key store's folder (else $XDG_DATA_HOME/harness/keys, ~/.local/share/...).
KEY_STORE_ENV = "HARNESS_KEY_STORE"
KEY_BYTES = 32
#: What a legacy key file beside its recording is called: ``<recording>`` + this.
BESIDE = ".key"


def key_id(key: bytes) -> str:
    """A fingerprint of ``key`` that reveals nothing of it: told in the recording's header so an
    append with another key is refused rather than silently breaking the mapping, and the name
    of the key's file in the key store."""
    return hmac.new(key, b"asmx-harness key id", hashlib.sha256).hexdigest()[:12]


def key_store() -> Path:
    """The folder of the per-user key store (not created here)."""
    named = os.environ.get(KEY_STORE_ENV)
    if named:
        return Path(named).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "harness" / "keys"


def stored_key_path(fingerprint: str) -> Path:
    """Where the key store keeps the key of fingerprint ``fingerprint`` (``key_id``)."""
    return key_store() / f"{fingerprint}.key"


def read_key(path: str | Path) -> bytes:
    """The key in ``path``: RecordingError (one line) when it cannot be read or holds none."""
    path = Path(path)
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except OSError as exc:
        raise RecordingError(f"cannot use key file {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError):
        raise RecordingError(f"key file {path} does not hold a hex key") from None
    if len(key) < 16:
        raise RecordingError(f"key file {path} does not hold a hex key (too short)")
    return key


def write_key(path: str | Path, key: bytes) -> Path:
    """``key`` written to a new file ``path`` (mode 0600; its new folders 0700)."""
    path = Path(path)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(key.hex() + "\n")
    except OSError as exc:
        raise RecordingError(f"cannot write key file {path}: {exc.strerror or exc}") from None
    return path


def load_or_create_key(path: str | Path) -> bytes:
    """The key in ``path``, created (random, mode 0600) when the file does not exist."""
    path = Path(path)
    if path.exists():
        return read_key(path)
    key = secrets.token_bytes(KEY_BYTES)
    write_key(path, key)
    return key


def new_stored_key() -> tuple[bytes, Path]:
    """A new random key, saved in the key store: (the key, its file)."""
    key = secrets.token_bytes(KEY_BYTES)
    return key, write_key(stored_key_path(key_id(key)), key)


def beside(recording: str | Path) -> Path:
    """Where capture kept a recording's key before the key store: next to it."""
    return Path(f"{recording}{BESIDE}")


def recorded_key_id(recording: str | Path) -> str | None:
    """The fingerprint of the key a native recording was redacted with (its header's
    ``redaction.key_id``); None for a recording not redacted, or a HAR file."""
    from harness.traffic.recording import read_header

    header = read_header(recording)
    if not header or not header.get("redacted"):
        return None
    found = (header.get("redaction") or {}).get("key_id")
    return found if isinstance(found, str) and found else None


def find_key(recording: str | Path, fingerprint: str | None = None) -> tuple[bytes, Path] | None:
    """The key of ``recording`` and the file it was read from, without a flag: the file
    beside it (where capture kept it before), else the key store's file of its fingerprint
    (``fingerprint``, or its header's ``key_id``). None when neither holds it."""
    if fingerprint is None and Path(recording).is_file():
        fingerprint = recorded_key_id(recording)
    old = beside(recording)
    if old.is_file():
        key = read_key(old)
        if fingerprint is None or key_id(key) == fingerprint:
            return key, old
    if fingerprint is not None:
        stored = stored_key_path(fingerprint)
        if stored.is_file():
            key = read_key(stored)
            if key_id(key) == fingerprint:
                return key, stored
    return None


def capture_key(recording: str | Path, key_file: str | None = None) -> tuple[bytes, Path | None]:
    """The key capture redacts ``recording`` with, and its file (None for ``-``: a random key
    kept in memory for this run only): ``key_file`` (created when missing), else the
    recording's own (``find_key``: appending keeps its pseudonyms), else a new key in the key
    store. RecordingError when the recording was redacted with a key that cannot be found."""
    if key_file == "-":
        return secrets.token_bytes(KEY_BYTES), None
    if key_file:
        return load_or_create_key(key_file), Path(key_file)
    path = Path(recording)
    fingerprint = recorded_key_id(path) if path.is_file() else None
    found = find_key(path, fingerprint)
    if found is not None:
        return found
    if fingerprint is not None:
        raise RecordingError(f"{recording} was redacted with the key {fingerprint}, which is "
                             f"neither in the key store ({key_store()}) nor beside it: pass "
                             "its key file (--key-file) or choose another --out")
    return new_stored_key()


def key_of_id(fingerprint: str, given: bytes | None = None) -> bytes | None:
    """The key whose fingerprint is ``fingerprint``: ``given`` (``--key-file``'s) when it is
    that key, else the key store's; None when neither is."""
    if given is not None and key_id(given) == fingerprint:
        return given
    stored = stored_key_path(fingerprint)
    if stored.is_file():
        key = read_key(stored)
        if key_id(key) == fingerprint:
            return key
    return None


@dataclass(frozen=True)
class RecordingKey:
    """One recording's pseudonym key, as the commands that read it find it."""

    recording: str
    #: The fingerprint its header names (None: not redacted, or a HAR file).
    key_id: str | None
    #: The key (None: not found, or none needed).
    key: bytes | None = None
    #: The file it was read from.
    path: Path | None = None

    @property
    def missing(self) -> bool:
        """A redacted recording whose key was not found: its pseudonyms cannot be compared."""
        return self.key is None and self.key_id is not None


def recording_keys(recordings: Sequence[str | Path], key_file: str | Path | None = None
                   ) -> dict[str, RecordingKey]:
    """Each recording's key by its path (``str(Path(recording))``, as an exchange's ``source``
    names it): ``key_file`` (``--key-file``) for every
    recording it is the key of (a HAR file, which names no key, takes it too), the others'
    found without a flag (``find_key``). UsageError when ``key_file`` is the key of none."""
    given = read_key(key_file) if key_file else None
    found: dict[str, RecordingKey] = {}
    for recording in (str(Path(r)) for r in recordings):
        fingerprint = recorded_key_id(recording) if Path(recording).is_file() else None
        if given is not None and fingerprint in (None, key_id(given)):
            found[recording] = RecordingKey(recording, fingerprint, given, Path(key_file))
            continue
        located = find_key(recording, fingerprint) if fingerprint else None
        found[recording] = RecordingKey(recording, fingerprint, *(located or (None, None)))
    if given is not None and not any(k.key == given for k in found.values()):
        ids = sorted({k.key_id for k in found.values() if k.key_id})
        raise UsageError(f"--key-file {key_file} is not the key of "
                         + (f"{', '.join(map(str, recordings))} (key id {', '.join(ids)}; "
                            f"this file's is {key_id(given)})" if ids else
                            "any recording given (none of them is redacted)"))
    return found


def missing_line(keys: Iterable[RecordingKey], command: str) -> str | None:
    """One line naming the redacted recordings whose key was not found (their pseudonyms are
    not compared), or None."""
    lost = [k for k in keys if k.missing]
    if not lost:
        return None
    names = ", ".join(f"{k.recording} (key id {k.key_id})" for k in lost[:3])
    more = f" and {len(lost) - 3} more" if len(lost) > 3 else ""
    return (f"{command}: no pseudonym key for {names}{more} in the key store ({key_store()}) "
            "nor beside it: its redacted values are not compared (--key-file FILE gives it)")
