"""Pseudonym keys (issue 30 item 7): the key store out of the working tree, and how every
command finds a recording's key without a flag (``harness.traffic.keys``)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness.errors import RecordingError, UsageError
from harness.traffic.keys import (
    KEY_STORE_ENV,
    capture_key,
    key_id,
    key_store,
    new_stored_key,
    recording_keys,
    stored_key_path,
    write_key,
)
from harness.traffic.recording import RecordingWriter


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "store"
    monkeypatch.setenv(KEY_STORE_ENV, str(folder))
    return folder


def _recording(path: Path, key: bytes | None) -> Path:
    redaction = {"key_id": key_id(key)} if key else None
    RecordingWriter(path, redacted=key is not None, redaction=redaction).close()
    return path


def test_the_store_follows_xdg_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(KEY_STORE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert key_store() == tmp_path / "data" / "harness" / "keys"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert key_store() == Path.home() / ".local" / "share" / "harness" / "keys"


def test_a_new_key_is_private_and_named_by_its_id(store: Path):
    key, path = new_stored_key()
    assert path == store / f"{key_id(key)}.key" == stored_key_path(key_id(key))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.stat().st_mode) == 0o700


def test_capture_reuses_the_recordings_key_and_makes_one_for_a_new_recording(
        store: Path, tmp_path: Path):
    key, path = capture_key(tmp_path / "new.jsonl")
    assert path.parent == store and not (tmp_path / "new.jsonl.key").exists()
    recording = _recording(tmp_path / "new.jsonl", key)
    assert capture_key(recording) == (key, path)  # appending: the same key
    path.unlink()
    with pytest.raises(RecordingError, match="neither in the key store"):
        capture_key(recording)


def test_readers_find_the_key_in_the_store_beside_or_by_flag(store: Path, tmp_path: Path):
    stored, _ = new_stored_key()
    old = bytes(range(32))
    in_store = _recording(tmp_path / "a.jsonl", stored)
    beside = _recording(tmp_path / "b.jsonl", old)
    write_key(f"{beside}.key", old)  # where capture kept keys before
    lost = _recording(tmp_path / "c.jsonl", bytes(32))
    plain = _recording(tmp_path / "d.jsonl", None)
    found = recording_keys([in_store, beside, lost, plain])
    assert found[str(in_store)].key == stored and found[str(beside)].key == old
    assert found[str(lost)].missing and found[str(lost)].key_id == key_id(bytes(32))
    assert not found[str(plain)].missing and found[str(plain)].key is None
    other = write_key(tmp_path / "given.key", bytes(32))
    assert recording_keys([lost], other)[str(lost)].key == bytes(32)
    with pytest.raises(UsageError, match="is not the key of"):
        recording_keys([in_store], other)
