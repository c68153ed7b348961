"""What a mock says when it stops: counts on the console, a small JSON document."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.mock.index import Index
from harness.mock.service import FORWARDED, RECORDED, REFERENCE, STUB, UNMATCHED, Stats


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile ``q`` (0-100) of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def latency(stats: Stats) -> dict[str, dict[str, float | int]]:
    """Per operation: p50 and p95 of the recorded delays answered with, in milliseconds."""
    return {op: {"p50_ms": round(percentile(kept, 50) * 1000, 1),
                 "p95_ms": round(percentile(kept, 95) * 1000, 1),
                 "answers": stats.delays_seen[op]}
            for op, kept in sorted(stats.delays.items()) if kept}


def loaded_line(index: Index, seconds: float) -> str:
    ops = len(index.operations)
    files = ", ".join(str(s.path) for s in index.sources)
    skipped = sum(index.skipped.values())
    return (f"{index.calls} recorded call(s) of {ops} operation(s), "
            f"{len(index.descriptions)} service description(s) from {files} "
            f"({index.exchanges} exchange(s) read in {seconds:.1f} s"
            + (f"; {skipped} not answerable: " + ", ".join(
                f"{n} {why}" for why, n in index.skipped.most_common()) if skipped else "")
            + (f"; {index.broken_count} broken line(s) skipped" if index.broken_count else "")
            + ")")


def console_lines(stats: Stats) -> list[str]:
    answered = stats.answered
    total = sum(answered.values())
    parts = [f"{answered[STUB]} by stubs"] if answered[STUB] else []
    if answered[RECORDED] or not answered[STUB]:
        parts.append(f"{answered[RECORDED]} from the recording")
    if answered[FORWARDED]:
        parts.append(f"{answered[FORWARDED]} forwarded to the fallback"
                     + (f" ({stats.fallback_failed} not answered there)"
                        if stats.fallback_failed else ""))
    if answered[REFERENCE]:
        parts.append(f"{answered[REFERENCE]} unmatched, answered by the reference")
    if answered[UNMATCHED]:
        parts.append(f"{answered[UNMATCHED]} unmatched, refused")
    lines = [f"{total} call(s) answered: " + ", ".join(parts)]
    if stats.injected:
        lines.append("faults injected: " + ", ".join(
            f"{n} {label}" for label, n in sorted(stats.injected.items())))
    unmatched = len(stats.unmatched) + stats.unmatched_other
    if unmatched:
        lines.append(f"{unmatched} distinct unmatched call(s)")
    if stats.descriptions:
        lines.append("service descriptions: " + ", ".join(
            f"{n} {'as recorded' if kind == 'recorded' else 'from the contract'}"
            for kind, n in sorted(stats.descriptions.items())))
    if stats.other:
        lines.append(f"{stats.other} other request(s): no call of the contract, or refused "
                     "by its binding rules as the reference refuses them")
    for op, figures in latency(stats).items():
        lines.append(f"latency (recorded) {op}: p50 {figures['p50_ms']:g} ms, "
                     f"p95 {figures['p95_ms']:g} ms over {figures['answers']} answer(s)")
    return lines


def as_json(index: Index, stats: Stats, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "command": "mock",
        "recordings": [str(s.path) for s in index.sources],
        "options": options,
        "indexed": {"exchanges": index.exchanges, "calls": index.calls,
                    "operations": dict(sorted(index.operations.items())),
                    "descriptions": len(index.descriptions),
                    "not_answerable": dict(index.skipped), "broken_lines": index.broken_count},
        "answered": {"stub": stats.answered[STUB], "recorded": stats.answered[RECORDED],
                     "forwarded": stats.answered[FORWARDED],
                     "reference": stats.answered[REFERENCE],
                     "refused": stats.answered[UNMATCHED]},
        "fallback_not_answered": stats.fallback_failed,
        "injected": dict(sorted(stats.injected.items())),
        "descriptions": dict(stats.descriptions),
        "other_requests": stats.other,
        "unmatched": [{"operation": u.operation, "binding": u.binding, "call": u.call,
                       "nearest": u.nearest, "count": u.count}
                      for u in stats.unmatched.values()],
        "unmatched_not_listed": stats.unmatched_other,
        "latency": latency(stats),
    }


def write_json(path: str, data: dict[str, Any]) -> None:
    try:
        Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
