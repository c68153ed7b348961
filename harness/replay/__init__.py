"""Replay: recorded requests sent to a target, each answer judged by the response-side rules
and compared with the recorded one (``harness.judge.compare``); load judges its answers here
too.

    report = replay(["recordings/day.jsonl"], contract, "http://127.0.0.1:8000")
    write_json(report, "reports/replay.json")  # harness.reports.json_report
"""

from harness.replay.engine import (
    REPLAY_RULES,
    Layout,
    Pace,
    Replayed,
    ReplayJob,
    check_replayed,
    judge_answer,
    replay,
    replay_exchange,
    skipped_description,
    transport_failure,
)

__all__ = ["REPLAY_RULES", "Layout", "Pace", "ReplayJob", "Replayed", "check_replayed",
           "judge_answer", "replay", "replay_exchange", "skipped_description",
           "transport_failure"]
