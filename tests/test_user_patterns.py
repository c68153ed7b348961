"""Regular expressions a user writes run in time linear in the text (RE2): a feature's
``matches`` step and a mock stub's ``pattern`` that would backtrack for hours on Python's
``re`` (``([0-9a-f]+)+z`` against the 64 hex digits of GetTokenDevice's token) finish, and a
construct RE2 lacks (a backreference, lookaround) is refused in one line before anything runs.
Real processes: ``harness certify`` against the embedded reference, ``harness mock`` asked by
httpx."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest
from test_mock import Served, run
from test_scenarios import certify_features

from harness.patterns import PatternError, compile_pattern

#: ~2^64 ways to split 64 hex digits between the inner and the outer repetition: a
#: backtracking engine tries them all before it can say "no match".
CATASTROPHIC = "([0-9a-f]+)+z"

FEATURE = f"""\
Feature: tokens
  Scenario: the token is hex
    Given the service under test
    When the client calls GetTokenDevice over HTTP GET with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result matches "{CATASTROPHIC}"
"""


def test_a_catastrophic_feature_pattern_fails_as_a_finding_instead_of_running_forever(
        tmp_path: Path) -> None:
    done = certify_features(tmp_path, {"tokens.feature": FEATURE})
    assert done.code == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    outcome, said = done.scenarios["the token is hex"]
    assert outcome == "failed"
    # the token is a credential: shown by its pseudonym
    assert f'expected a result matching "{CATASTROPHIC}", actual "redacted-' in said, said


@pytest.mark.parametrize(("pattern", "words"), [
    (r"(.)\1", r"backreferences (\1) are not supported"),
    ("token(?=-)", "lookahead (?=...) is not supported"),
    ("(?<=x)token", "lookbehind (?<=...) is not supported"),
    (r"token\Z", r"\Z is written \z here"),
])
def test_a_feature_pattern_re2_cannot_run_is_refused_before_the_run(tmp_path: Path, pattern,
                                                                   words) -> None:
    done = certify_features(tmp_path, {"tokens.feature": FEATURE.replace(CATASTROPHIC,
                                                                        pattern)})
    assert done.code == 2 and done.stdout == "", done.stdout + done.stderr
    feature = tmp_path / "features" / "tokens.feature"
    assert done.stderr.splitlines() == [
        f"harness certify: error: {feature}:7: {pattern!r} is not a regular expression the "
        f"harness runs: {words} (patterns run on RE2, in time linear in the text: no "
        "backtracking)"]


def test_a_catastrophic_stub_pattern_leaves_the_mock_answering(contract, tmp_path: Path) -> None:
    stubs = tmp_path / "stubs.toml"
    stubs.write_text(f'[[stub]]\noperation = "GetTokenDevice"\n'
                     f'when = {{ id = {{ pattern = "{CATASTROPHIC}" }} }}\n'
                     'result = "token-stubbed"\n', encoding="utf-8")
    served = Served("--stubs", str(stubs), cwd=tmp_path)
    try:
        get = f"{served.url}/PushNotificationMobile.asmx/GetTokenDevice"
        hex_id = "0123456789abcdef" * 4
        # a generous bound: the call is answered at all (a backtracking match never is)
        unmatched = httpx.get(get, params={"id": hex_id}, timeout=120)
        matched = httpx.get(get, params={"id": hex_id + "z"}, timeout=120)
    finally:
        code, _out, err = served.stop(signal.SIGINT)
    assert unmatched.status_code == 500 and unmatched.headers["X-Harness-Mock"] == "unmatched"
    assert "no stub answers GetTokenDevice" in unmatched.text
    assert matched.status_code == 200 and "token-stubbed" in matched.text
    assert code == 1 and "Traceback" not in err, err  # a call went unmatched


def test_a_stub_pattern_re2_cannot_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    stubs = tmp_path / "stubs.toml"
    stubs.write_text('[[stub]]\noperation = "GetTokenDevice"\n'
                     'when = { id = { pattern = "(a)\\\\1" } }\nresult = "x"\n', encoding="utf-8")
    done = run("mock", "--stubs", str(stubs), "--port", "0", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines() == [
        f"harness mock: error: {stubs}:3: the pattern of id cannot be used: backreferences "
        r"(\1) are not supported (patterns run on RE2, in time linear in the text: no "
        "backtracking)"]


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("token-for-[0-9]+", "token-for-77", True),
    ("a.b", "a\nb", True),  # as re.DOTALL: a result may span lines
    (r"[0-9]+\.[0-9]{2}", "12.50", True),
    ("(?i)TOKEN", "token", True),
    (CATASTROPHIC, "0123456789abcdef" * 4096, False),
])
def test_the_syntax_users_write(pattern: str, text: str, matches: bool) -> None:
    assert (compile_pattern(pattern).fullmatch(text) is not None) is matches


def test_a_pattern_too_large_for_re2_is_refused() -> None:
    with pytest.raises(PatternError, match="too large"):
        compile_pattern(r"\pL{1000}" * 20)
