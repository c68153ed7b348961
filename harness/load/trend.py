"""Run over run: ``harness load --baseline previous.json`` compares this run's Locust stats
per operation x binding (and in all) with a previous run's ``--json``, as findings of the
shared report model (plain Python: no gevent).

A metric regresses when it is worse than the baseline's by more than its limit: a latency
percentile higher by more than ``--max-pNN-regression`` (a share: 20% or 0.2) and by more
than ``--min-regression-ms`` (a few milliseconds on a fast answer are noise, not a
regression); requests per second lower by more than ``--max-rps-regression``; the failed share
of requests higher by more than ``--max-failure-regression`` (percentage points). A pair with
fewer than MIN_REQUESTS requests in either run is not compared (not applicable, said why).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.files import BASELINE_LIMIT, read_limited
from harness.judge.findings import Finding, Verdict

#: Requests a pair needs in both runs to be compared.
MIN_REQUESTS = 10
#: Operation and binding of the line of every request together.
ALL = "(all)"

TITLES = {
    "LOAD-TREND-RPS": "requests per second no lower than the baseline's beyond "
                      "--max-rps-regression",
    "LOAD-TREND-P50": "median response time no higher than the baseline's beyond "
                      "--max-p50-regression",
    "LOAD-TREND-P95": "95th percentile response time no higher than the baseline's beyond "
                      "--max-p95-regression",
    "LOAD-TREND-P99": "99th percentile response time no higher than the baseline's beyond "
                      "--max-p99-regression",
    "LOAD-TREND-FAILURES": "failed share of requests no higher than the baseline's beyond "
                           "--max-failure-regression",
}

#: The timing settings two runs must share for their request rates to compare.
TIMING_KEYS = ("mode", "speed", "loops", "max_wait", "rate", "users", "shape", "workers")


@dataclass(frozen=True)
class Limits:
    """How much worse than the baseline each metric may be (None: not compared)."""

    p50: float | None = None
    p95: float | None = 0.20
    p99: float | None = None
    rps: float | None = 0.20
    failures: float | None = 0.01
    min_ms: float = 10.0

    def to_data(self) -> dict[str, Any]:
        return dict(self.__dict__)


_NAME = re.compile(r"^(.*) \[([^\]]+)\]$")


def split_name(name: str) -> tuple[str, str]:
    """(operation, binding label) of a Locust stats line ("AuthCode [SOAP 1.1]"); an
    unclassified request's line ("POST /x") as (that, "-")."""
    match = _NAME.match(name)
    return (match.group(1), match.group(2)) if match else (name, "-")


def stats_line(operation: str, binding: str, requests: int, failures: int, seconds: float,
               p50: float | None, p95: float | None, p99: float | None) -> dict[str, Any]:
    """One line of the report's ``stats``: what a later run's --baseline compares with."""
    return {"operation": operation, "binding": binding, "requests": requests,
            "failures": failures,
            "fail_ratio": round(failures / requests, 4) if requests else 0.0,
            "rps": round(requests / seconds, 2) if seconds > 0 else 0.0,
            "p50_ms": p50, "p95_ms": p95, "p99_ms": p99}


def read_baseline(path: str) -> dict[str, Any]:
    """The previous run's JSON report (its ``stats`` and timing), or one UsageError line."""
    try:
        data = json.loads(read_limited(path, BASELINE_LIMIT, "baseline").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--baseline {path} is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("command") != "load" \
            or not isinstance(data.get("stats"), list):
        raise UsageError(f"--baseline {path} is not the --json of a harness load run "
                         "(no per-operation stats)")
    return {"path": str(path), "stats": data["stats"],
            "timing": {k: data.get(k) for k in TIMING_KEYS}}


def compare(baseline: dict[str, Any], stats: Iterable[dict[str, Any]], timing: dict[str, Any],
            limits: Limits) -> list[Finding]:
    """A finding per compared metric of each operation x binding in both runs: failed for a
    regression beyond its limit, passed within it, not applicable when a run has too few
    requests of it or the runs' timings differ (request rates only)."""
    before = {(s.get("operation"), s.get("binding")): s for s in baseline["stats"]
              if isinstance(s, dict)}
    same_timing = all(baseline["timing"].get(k) == timing.get(k) for k in TIMING_KEYS)
    source = Path(baseline["path"]).name
    found: list[Finding] = []
    for now in stats:
        key = (now["operation"], now["binding"])
        then = before.get(key)
        if then is None:
            continue  # not in the baseline: nothing to compare with
        few = min(int(then.get("requests") or 0), now["requests"])
        for rule, limit in (("LOAD-TREND-P50", limits.p50), ("LOAD-TREND-P95", limits.p95),
                            ("LOAD-TREND-P99", limits.p99), ("LOAD-TREND-RPS", limits.rps),
                            ("LOAD-TREND-FAILURES", limits.failures)):
            if limit is None:
                continue
            base = dict(rule=rule, operation=key[0], binding=key[1], source=source)
            if few < MIN_REQUESTS:
                found.append(Finding(**base, verdict=Verdict.NOT_APPLICABLE,
                                     cause=f"fewer than {MIN_REQUESTS} requests in a run"))
            elif rule == "LOAD-TREND-RPS" and not same_timing:
                found.append(Finding(**base, verdict=Verdict.NOT_APPLICABLE,
                                     cause="the baseline ran with other timing settings"))
            else:
                found.append(_judged(base, rule, limit, then, now, limits.min_ms))
    return found


def _judged(base: dict[str, Any], rule: str, limit: float, then: dict[str, Any],
            now: dict[str, Any], min_ms: float) -> Finding:
    if rule == "LOAD-TREND-FAILURES":
        old, new = float(then.get("fail_ratio") or 0.0), now["fail_ratio"]
        worse = new > old + limit
        expected = f"failed at most {old + limit:.2%} (baseline {old:.2%} + {limit:.2%})"
        actual = f"{new:.2%} failed"
    elif rule == "LOAD-TREND-RPS":
        old, new = float(then.get("rps") or 0.0), now["rps"]
        floor = old * (1 - limit)
        worse = new < floor
        expected = f"at least {floor:.2f} req/s (baseline {old:g} - {limit:.0%})"
        actual = f"{new:g} req/s ({_change(old, new)})"
    else:
        field = rule.rsplit("-", 1)[1].lower() + "_ms"
        old, new = float(then.get(field) or 0.0), float(now[field] or 0.0)
        ceiling = max(old * (1 + limit), old + min_ms)
        worse = new > ceiling
        expected = (f"{field[:3]} at most {ceiling:g} ms (baseline {old:g} ms + {limit:.0%}, "
                    f"at least + {min_ms:g} ms)")
        actual = f"{new:g} ms ({_change(old, new)})"
    return Finding(**base, verdict=Verdict.FAILED if worse else Verdict.PASSED,
                   expected=expected, actual=actual,
                   cause=f"{rule.rsplit('-', 1)[1].lower()} regressed beyond the limit"
                   if worse else "")


def _change(old: float, new: float) -> str:
    if old <= 0:
        return "baseline 0"
    return f"{(new - old) / old:+.0%} on the baseline"
