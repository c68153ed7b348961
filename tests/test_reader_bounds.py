"""Every reader of recordings bounds what one exchange may hold (harness.traffic.bounds): an
entry of a .zhar or a line of a recording with too many headers, too many JSON values or too
many header bytes is refused by name, one line, and every other exchange is read as usual. The
commands run as real processes against the reference on loopback; peak memory on the 10
million-header .zhar is bench/bench_oversize.py's to show."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from oversize import many_headers_line, many_headers_zhar
from traffic import clean_exchanges, write_recording

from harness.contract.model import Contract
from harness.errors import RecordingError
from harness.traffic import har
from harness.traffic.exchange import Exchange
from harness.traffic.har import read_har, write_har
from harness.traffic.recording import read_exchanges

HARNESS = [sys.executable, "-m", "harness"]
VALUES = "it holds more than 100,000 JSON values (in request.headers)"


@pytest.fixture(scope="module")
def hostile(contract: Contract, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A .zhar whose entry 2 of 3 has 50,000 headers, and a recording whose line 3 has 3,000
    headers and line 4 60,000 (lines 2 and 5 are well-formed)."""
    folder = tmp_path_factory.mktemp("hostile")
    good = clean_exchanges(contract)
    zhar = many_headers_zhar(folder / "h.zhar", good, 50_000)
    path = write_recording(folder / "r.jsonl", good[2:4])
    header, first, last = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(header + first + many_headers_line(good[4], 3_000)
                     + many_headers_line(good[5], 60_000) + last)
    return {"zhar": zhar, "jsonl": path, "headers": len(good[4].request.headers) + 3_000}


def refusals(hostile: dict[str, Any]) -> list[str]:
    zhar, jsonl, count = hostile["zhar"], hostile["jsonl"], hostile["headers"]
    return [f"{zhar}: HAR entry 2 is refused: {VALUES}",
            f"{jsonl}:3: exchange refused: its request has {count:,} headers (at most "
            "2,000 are read)",
            f"{jsonl}:4: exchange refused: {VALUES}"]


COMMANDS = {
    "lint": ([], "over 4 exchanges"),
    "replay": (["--target", "{url}"], "over 4 calls"),
    "load": (["--target", "{url}", "--loop", "1"], "load: 4 requests"),
    "diff": (["--primary", "{url}", "--candidate", "{url}", "--allure-dir", ""],
             "over 4 calls"),
    "scenarios": (["-o", "{tmp}/features"], "4 call(s) of AuthCode"),
    "export": (["-o", "{tmp}/out.har"], "4 exchange(s) written"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_refuses_the_hostile_exchanges_by_name_and_reads_the_rest(
        hostile: dict[str, Any], reference_url: str, tmp_path: Path, command: str) -> None:
    flags, read = COMMANDS[command]
    done = subprocess.run(
        [*HARNESS, command, str(hostile["zhar"]), str(hostile["jsonl"]),
         *(f.format(url=reference_url, tmp=tmp_path) for f in flags)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "refused:" in line]
    assert len(said) == 3, done.stderr
    for line, reason in zip(said, refusals(hostile), strict=True):
        assert reason in line
    assert read in done.stdout + done.stderr


def test_mock_refuses_the_hostile_exchanges_by_name_and_answers_the_rest(
        hostile: dict[str, Any], tmp_path: Path) -> None:
    mock = subprocess.Popen(
        [*HARNESS, "mock", "--port", "0", "--quiet", str(hostile["zhar"]), str(hostile["jsonl"])],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert mock.stderr is not None
        said = []
        while (line := mock.stderr.readline()) and " on http://" not in line:
            said.append(line)
        assert line, "".join(said)
    finally:
        mock.send_signal(signal.SIGINT)
        mock.communicate(timeout=60)
    text = "".join(said)
    for reason in refusals(hostile):
        assert reason in text
    assert "4 exchange(s) read" in text and "3 broken line(s) skipped" in text


def test_a_zhar_entry_of_many_headers_is_passed_over_without_being_built(
        contract: Contract, tmp_path: Path) -> None:
    """300,000 headers: reading the file never holds them (it used to build them all, and
    10 million took 2.75 GB); the entries around it are read."""
    path = many_headers_zhar(tmp_path / "h.zhar", clean_exchanges(contract), 300_000)
    said: list[str] = []
    tracemalloc.start()
    try:
        exchanges = list(read_har(path, on_broken=lambda _p, _n, why: said.append(why)))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [e.index for e in exchanges] == [1, 2]
    assert said == [f"{path}: HAR entry 2 is refused: {VALUES}"]
    assert peak < 16 << 20, f"{peak / 2**20:.1f} MiB to read past 300,000 headers"


def test_headers_over_their_byte_bound_are_refused_in_every_format(
        contract: Contract, tmp_path: Path) -> None:
    good = clean_exchanges(contract)
    big = Exchange(good[0].request.with_header("X-Big", "v" * (5 << 20)), good[0].response)
    path = write_recording(tmp_path / "r.jsonl", [good[1], big, good[2]])
    write_har([good[1], big, good[2]], tmp_path / "r.har")
    said: list[str] = []
    read = list(read_exchanges([path, tmp_path / "r.har"],
                               on_broken=lambda _p, _n, why: said.append(why)))
    assert len(read) == 4
    reason = "its request's headers hold 5.0 MiB (at most 4.0 MiB are read)"
    assert said == [f"{path}:3: exchange refused: {reason}",
                    f"{tmp_path / 'r.har'}: HAR entry 2 is refused: {reason}"]


def test_one_value_longer_than_an_entry_may_be_stops_the_file_by_name(
        contract: Contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A string is built whole by the parser: one over the entry bound is refused before it
    is, with the entries read so far kept and the rest said to be unread."""
    monkeypatch.setattr(har, "MAX_ENTRY_BYTES", 4 << 20)
    good = clean_exchanges(contract)
    big = Exchange(good[0].request, good[0].response.__class__(
        200, good[0].response.headers, b"x" * (6 << 20)))
    write_har([good[1], big, good[2]], tmp_path / "r.har")
    read: list[Exchange] = []
    with pytest.raises(RecordingError) as err:
        read.extend(read_har(tmp_path / "r.har"))
    assert len(read) == 1
    assert str(err.value) == (f"{tmp_path / 'r.har'}: HAR entry 2 holds a value longer than "
                              "4 MiB; it and the entries after it are not read")


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                children = [int(c) for c in (task / "children").read_text().split()]
                found += children
                todo += children
    return found


def _environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0")
                if "=" in item)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="replay works in one process on 1 core")
def test_replays_worker_processes_give_large_buffers_back(contract: Contract, reference_url: str,
                                                          tmp_path: Path) -> None:
    """glibc kept each 1 MB header freed in a worker's heap (~20 MB a worker, 296-322 MB for
    replay of 320 of them, bench/bench_oversize.py): every process replay starts pins malloc's
    threshold for returned mappings. Seen in the workers' environment while they work (paced
    at 4 calls a second: 8 s for the 32 calls)."""
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    replay = subprocess.Popen(
        [*HARNESS, "replay", str(path), "--target", reference_url, "--rate", "4",
         "--namespace", "http://tempuri.org/", "--concurrency", "2"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        seen: dict[int, str | None] = {}  # every process replay started: its variable
        # (read again until set: a child between its fork and its exec shows its parent's)
        while replay.poll() is None and (len(seen) < 4 or None in seen.values()):
            for pid in set(_descendants(replay.pid)) | {p for p, v in seen.items() if not v}:
                with contextlib.suppress(OSError):
                    seen[pid] = _environment(pid).get("MALLOC_MMAP_THRESHOLD_")
            time.sleep(0.05)
        assert len(seen) >= 3, replay.stderr.read() if replay.stderr else ""
        assert set(seen.values()) == {"131072"}, seen
    finally:
        replay.kill()
        replay.communicate(timeout=60)


def test_a_chunk_of_large_exchanges_leaves_no_garbage_behind(contract: Contract,
                                                             reference_url: str) -> None:
    """A replayed request ends in a cycle of httpcore's connection objects (its 1 MB header
    twice over); a worker collects such cycles lazily (streaming._YOUNG_OBJECTS), and ~200 of
    them piled up: 250-400 MB a worker. A chunk of large exchanges is collected when done."""
    import gc

    import httpx

    from harness.judge import streaming
    from harness.replay.engine import ReplayJob

    big = [Exchange(e.request.with_header("X-Big", "v" * (100 << 10)), e.response)
           for e in clean_exchanges(contract)[:2]]
    lines = [json.dumps(e.to_dict()).encode() + b"\n" for e in big]
    job = ReplayJob(contract, reference_url, threads=1)
    job.setup()
    streaming._job = job
    gc.collect()
    gc.disable()
    try:
        streaming.process(streaming.Chunk("big.jsonl", 2, lines))
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, httpx.Request)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
        streaming._job = None
        job.close()
    assert left == []
