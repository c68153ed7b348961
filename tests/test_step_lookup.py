"""certify's memoised pytest-bdd step lookup (harness/certify/step_lookup.py), on a real pytest-bdd
run in this process: a closer conftest's step definition still wins over the root's, each step's
arguments still come from its own text, and a step definition's parser is tried once per step
text, not once per step of every scenario; each step function's signature is read once, not
twice a step."""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path

import pytest

from harness.certify.engine import _pytest_environment
from harness.certify.step_lookup import SIGNATURE_READERS

#: 12 scenarios of the same 4 steps (two texts of one When definition, with their own numbers):
#: without the memo every parser of the step's type is tried on every step of each.
FEATURE = "Feature: baskets\n" + "".join(f"""
  Scenario: basket {n}
    Given a basket of 3 apples
    When I add 2 apples
    And I add 4 apples
    Then the basket holds 9 apples
""" for n in range(12))

ROOT_STEPS = '''
import json, os
from pytest_bdd import given, parsers, then, when

TRIED = {"count": 0}


class Counting(parsers.parse):
    def is_matching(self, name):
        TRIED["count"] += 1
        return super().is_matching(name)


@given(Counting("a basket of {n:d} apples"), target_fixture="basket")
def basket(n):
    return {"apples": n, "by": "root"}


@when(Counting("I add {n:d} apples"))
def add(basket, n):
    basket["apples"] += n


@then(Counting("the basket holds {n:d} apples"))
def holds(basket, n):
    assert basket["apples"] == n
    with open(os.environ["STEP_LOOKUP_OUT"], "a") as out:
        out.write(json.dumps([basket["by"], n]) + "\\n")


def pytest_sessionfinish(session):
    with open(os.environ["STEP_LOOKUP_OUT"], "a") as out:
        out.write(json.dumps(["tried", TRIED["count"]]) + "\\n")
'''

#: The closer conftest's override of the Given step (same words, its own definition).
OVERRIDE = '''
from pytest_bdd import given, parsers


@given(parsers.parse("a basket of {n:d} apples"), target_fixture="basket")
def basket(n):
    return {"apples": n, "by": "closer"}
'''

TEST = '''
from pathlib import Path
from pytest_bdd import scenarios

scenarios(str(Path(__file__).with_name("baskets.feature")))
'''


def run(folder: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> list[list]:
    monkeypatch.setenv("STEP_LOOKUP_OUT", str(out))
    monkeypatch.chdir(folder)
    with _pytest_environment():
        code = pytest.main([str(folder), "-q", "-p", "pytest_bdd.plugin", "-p",
                            "no:cacheprovider", "--import-mode=importlib", "-c", "/dev/null",
                            "--rootdir", str(folder), "-p", "no:xdist", "-p", "no:randomly"])
    assert code == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def counting_signature_reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The functions pytest-bdd reads the signature of, one entry a read."""
    read: list[object] = []
    for name in SIGNATURE_READERS:
        module = importlib.import_module(name)
        original = module.signature

        def counted(function, *args, _original=original, **kwargs):
            read.append(function)
            return _original(function, *args, **kwargs)

        monkeypatch.setattr(module, "signature", counted)
    return read


def test_closer_overrides_args_and_one_try_per_step_text(tmp_path, monkeypatch):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(ROOT_STEPS))
    for sub in ("plain", "closer"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "baskets.feature").write_text(FEATURE)
        (tmp_path / sub / f"test_{sub}.py").write_text(TEST)
    (tmp_path / "closer" / "conftest.py").write_text(OVERRIDE)

    signatures = counting_signature_reads(monkeypatch)
    lines = run(tmp_path, tmp_path / "out.jsonl", monkeypatch)
    held = [line for line in lines if line[0] != "tried"]
    # 24 scenarios passed (the Then step checks 3 + 2 + 4: each step's own number was parsed);
    # under closer/ the closer conftest's Given was the one run.
    assert sorted(held) == [["closer", 9]] * 12 + [["root", 9]] * 12
    # Memoised: each counting parser is tried once on each of the 4 step texts, in each of the
    # 2 folders (8 tries), and the Given once more after its target fixture's name first
    # appears (a new fixture name starts the lists afresh). Without the memo, each of the 4
    # steps of the 24 scenarios: 96.
    [tried] = [line[1] for line in lines if line[0] == "tried"]
    assert tried == 9, tried
    # The 4 step functions' signatures (basket twice: the root's and the closer one), once per
    # reading module: without the memo, twice for each of the 96 steps.
    steps = [f for f in signatures if getattr(f, "__name__", "") in ("basket", "add", "holds")]
    assert 0 < len(steps) <= 4 * len(SIGNATURE_READERS), len(steps)
