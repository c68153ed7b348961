"""The native recording format: append-only JSON Lines that survive crashes."""

from __future__ import annotations

import json

import pytest

from harness.errors import RecordingError
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.recording import FORMAT, RecordingWriter, read_exchanges, read_header


def _exchange(i: int, body: bytes = b"") -> Exchange:
    return Exchange(HttpRequest("POST", f"http://h/a.asmx?i={i}", (("X-N", str(i)),), body),
                    HttpResponse(200, (("Content-Type", "text/xml"),), b"<ok/>", "OK"),
                    meta={"n": i})


def test_header_then_one_line_per_exchange_bodies_exact(tmp_path):
    path = tmp_path / "r.jsonl"
    binary = bytes(range(256))
    with RecordingWriter(path, upstream="http://h", redacted=False, mode="reverse") as w:
        w.write(_exchange(1, "ünï".encode()))
        w.write(_exchange(2, binary))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    header = read_header(path)
    assert header["format"] == FORMAT and header["upstream"] == "http://h"
    assert header["redacted"] is False and header["mode"] == "reverse"
    assert json.loads(lines[2])["request"]["body"].keys() == {"base64"}
    got = list(read_exchanges([path]))
    assert [e.request.body for e in got] == ["ünï".encode(), binary]
    assert [e.index for e in got] == [1, 2] and got[1].meta == {"n": 2}


def test_append_after_a_crash_mid_line(tmp_path):
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path) as w:
        w.write(_exchange(1))
    with path.open("a") as f:
        f.write('{"request": {"method": "PO')  # killed mid-write
    with RecordingWriter(path) as w:
        w.write(_exchange(2))
    broken = []
    got = list(read_exchanges([path], on_broken=lambda p, n, r: broken.append((n, r))))
    assert [e.meta["n"] for e in got] == [1, 2]
    assert len(broken) == 1 and broken[0][0] == 3
    with pytest.raises(RecordingError, match="broken exchange line"):
        list(read_exchanges([path], skip_broken=False))


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    (b"\x00\x01garbage", "neither a harness recording nor a HAR file"),
    (b'{"format": "asmx-harness-recording", "version": 99}\n', "version 99"),
])
def test_unreadable_recordings_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(RecordingError) as err:
        list(read_exchanges([path]))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unwritable_recording_is_one_line_error(tmp_path):
    with pytest.raises(RecordingError, match="cannot write recording"):
        RecordingWriter(tmp_path)  # a directory
