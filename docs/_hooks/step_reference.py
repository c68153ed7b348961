"""The step reference of docs/scenarios.md, made when the site is built from the step
definitions themselves (steps/*.py, read through ``harness.scenarios.lint.vocabulary``): each
sentence, what it does and its example, which must read as that sentence and no other (the build
fails otherwise). And a feature ``harness scenarios`` writes from the committed sample
recording, as it writes it today. Neither can drift from the code."""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
#: The sections of the reference: the step modules, in the vocabulary's order.
SECTIONS = {
    "harness.certify.steps.conformance_steps": "The service, calls and the binding rules",
    "harness.certify.steps.scenario_steps": "Values, results, elements, faults, headers",
    "harness.certify.steps.mock_steps": "A mock as the target: stubs, and the calls it received",
}
SAMPLE = ROOT / "recordings" / "sample-all-bindings.jsonl"


def step_reference() -> str:
    from harness.scenarios.lint import vocabulary

    sentences = vocabulary()
    out: list[str] = []
    for module, title in SECTIONS.items():
        out += [f"### {title}", ""]
        for sentence in (s for s in sentences if s.function.__module__ == module):
            _check(sentence, sentences)
            out += [f"#### `{sentence.template}`", "", sentence.description or "", "",
                    "```gherkin", sentence.example[0],
                    *(f"  {row}" for row in sentence.example[1:]), "```", ""]
    missing = {s.function.__module__ for s in sentences} - set(SECTIONS)
    if missing:
        raise PluginError(f"docs: step reference: no section for {', '.join(sorted(missing))}")
    return "\n".join(out)


def _check(sentence, sentences) -> None:
    """The example reads as its sentence and no other (PluginError otherwise)."""
    if not sentence.example:
        raise PluginError(f"docs: step {sentence.template!r} has no Example in its docstring")
    keyword, _, text = sentence.example[0].partition(" ")
    kind = sentence.keyword or {"Given": "given", "When": "when"}.get(keyword, "then")
    readers = [s for s in sentences if s.keyword in (None, kind) and s.matches(text)]
    if readers != [sentence]:
        raise PluginError(f"docs: the example of {sentence.template!r} reads as "
                          f"{[s.template for s in readers]}")


def recorded_feature() -> str:
    """The GetTokenDevice feature ``harness scenarios`` writes from the sample recording."""
    from harness.contract.model import school_mobile
    from harness.scenarios.record import Written, collect, feature_text
    from harness.traffic.recording import read_exchanges

    found = collect(read_exchanges([SAMPLE]), school_mobile(), Written())
    text = feature_text(found["GetTokenDevice"], [str(SAMPLE)])
    return "\n".join(["```gherkin", text.rstrip("\n"), "```"])
