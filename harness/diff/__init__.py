"""Differential testing of two implementations of a contract: which answers of a candidate
(e.g. a new deployment) differ from a primary's (the legacy one), with noise learned from a
second instance of the primary, and each implementation checked for the same result over all
four bindings.

    result = Diff(contract, Targets(primary, candidate, secondary)).run(generated_cases(contract))
    write_json(result.report, "reports/diff.json")  # harness.reports.json_report
"""

from harness.diff.cases import Case, generated_cases, recorded_cases
from harness.diff.engine import TITLES, Diff, DiffResult, Targets
from harness.diff.output import print_places, write_allure

__all__ = ["TITLES", "Case", "Diff", "DiffResult", "Targets", "generated_cases",
           "print_places", "recorded_cases", "write_allure"]
