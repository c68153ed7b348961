"""Certify a deployment: run the conformance features against it and judge every exchange.

The features (``features/*.feature`` of the repository) are the binding rules as a QA lead reads
them; their steps (``steps/``) only glue words to this module: ``Service.call``
builds the spec's request, sends it, judges it with ``rules.judge`` (restricted to the rule IDs
the scenario is tagged with) and hands the findings to the run's Report; ``expect`` turns one
rule's findings into a step verdict.
``certify`` runs pytest over the features in-process with a small plugin, so Gherkin, console,
JSON, JUnit and Allure all come from the same run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

import pytest

from harness import stopping
from harness.certify.generate import WSDL_FEATURE, write_features
from harness.certify.step_lookup import memoised_signatures, memoised_step_lookup
from harness.contract.bindings import Binding, build_request
from harness.contract.model import (
    VALUE_SETS,
    Contract,
    Operation,
    sample_arguments,
    school_mobile,
)
from harness.contract.selection import Selection, Values
from harness.contract.structure import Value
from harness.errors import HarnessError, ResponseTooLarge, RunStopped, TargetUnreachable, UsageError
from harness.files import read_limited
from harness.judge import asmx_matrix, odd_requests, rules, sending, wsdl_rules
from harness.judge.calls import Call
from harness.judge.findings import (
    Finding,
    Report,
    Verdict,
    cause_of,
    selection_scope,
)
from harness.judge.profiles import Profile
from harness.progress import Progress
from harness.reference.server import target_or_reference
from harness.reports.allure_bridge import WARNING_LABEL, hold_results
from harness.reports.allure_report import AllureMissing, Renderer
from harness.reports.allure_results import (
    HeldResults,
    discard_set_aside,
    set_aside,
    write_overview,
)
from harness.reports.console import print_report, require_judged
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit
from harness.scenarios.outcome import SCENARIO, ScenarioRun, scenario_finding
from harness.scenarios.outcome import TITLE as SCENARIO_TITLE
from harness.traffic import send
from harness.traffic.exchange import Exchange, HttpRequest
from harness.traffic.redaction import KEY_BYTES, ReportRedaction, redacting_reports
from harness.traffic.report_text import example_text

#: Everything certify reads at run time lives inside the package (it works from a wheel).
PACKAGE = Path(__file__).resolve().parent




def _steps_folder() -> Path:
    """steps/ and features/ sit side by side at the top of the repository, and the build maps
    them side by side into this package (setup.py): only the import system knows where."""
    spec = importlib.util.find_spec(f"{__package__}.steps")
    if spec is None or spec.origin is None:
        raise ImportError(f"{__package__}.steps is not installed with the harness (in a clone: "
                          "run scripts/setup, which maps steps/ into the package)")
    return Path(spec.origin).resolve().parent


STEPS = _steps_folder()
FEATURES = STEPS.parent / "features"
#: The conformance scenarios certify runs (the replay engineer's recorded-traffic feature is not
#: one: it needs a recording).
FEATURE_FILES = ("soap11.feature", "soap12.feature", "http_get.feature", "http_post.feature",
                 "get_token_device.feature", "notification_notes.feature",
                 "versioning.feature", "odd_requests.feature", "asmx_matrix.feature")
CONFORMANCE_TESTS = STEPS / "test_conformance.py"
#: certify's pytest configuration (empty on purpose: see the file).
PYTEST_INI = PACKAGE / "pytest.ini"
#: The pytest plugins the features need, loaded by name: autoloading is off during certify, so
#: plugins of the environment it is installed into (coverage, xdist, random order) stay out.
PLUGINS = ("pytest_bdd.plugin", "allure_pytest.plugin")
DEFAULT_REPORT_DIR = Path("reports")
#: The features of the certify run under way when it chose its own (``--features``).
_run_features: tuple[Path, ...] = ()
#: Where the run's Report lives while pytest runs (absent in a plain ``pytest`` run).
REPORT_KEY = pytest.StashKey[Report]()
#: The contract of the run (absent in a plain ``pytest`` run: then --contract/--namespace).
CONTRACT_KEY = pytest.StashKey[Contract]()


@dataclass
class Settings:
    """How certify sends and what it selects (from the shared options and the config file)."""

    send: send.SendOptions = field(default_factory=send.SendOptions)
    selection: Selection = field(default_factory=Selection)
    values: Values = field(default_factory=Values)
    #: Rule IDs: only scenarios tagged with one of them run (empty: all).
    rules: frozenset[str] = frozenset()
    maxfail: int | None = None
    #: The user's own feature files (``--features DIR``) instead of the packaged ones.
    features: tuple[Path, ...] = ()
    #: No progress (``--quiet``).
    quiet: bool = False
    #: The pseudonym key reports use (``--key-file``: a capture's key gives its recording's
    #: pseudonyms); None: a random key of this run, never written.
    key: bytes | None = None
    #: Set when the run had to stop (no answers, TLS): certify turns it into exit 2.
    stopped: HarnessError | None = None
    #: Answers, and those that were 404 or an HTML page (a wrong target's signs).
    answered: int = 0
    strange: int = 0


#: The run's Settings while pytest runs (a plain ``pytest`` run uses the defaults).
SETTINGS_KEY = pytest.StashKey[Settings]()
#: The words of a scenario skipped because ``--operation``/``--binding`` leave out what it
#: sends: counted apart from the scenarios run (``scenarios["left out"]``).
LEFT_OUT = "left out by --operation/--binding"


def left_out(what: str) -> NoReturn:
    """Skip the scenario: ``what`` (an operation x binding, a binding, an endpoint's
    operations) is not selected."""
    pytest.skip(f"{what}: {LEFT_OUT}")


_SCENARIO_RUN = pytest.StashKey[ScenarioRun]()


class Service:
    """The service under test: a contract at a base URL, and one HTTP client."""

    def __init__(self, contract: Contract, base_url: str, report: Report | None = None,
                 settings: Settings | None = None) -> None:
        self.contract = contract
        self.base_url = send.base_url(base_url)
        self.report = report
        self.settings = settings or Settings()
        self._sender = send.Sender(self.settings.send)
        self._seen: set[tuple] = set()
        #: The ASMX matrix's spec calls already sent (rows share them), by request.
        self._controls: dict[tuple[str, str, bytes], Exchange] = {}

    def close(self) -> None:
        self._sender.close()

    def call(self, operation: str, binding: str, values: str | None = None,
             rules_: Iterable[str] | None = None, *,
             arguments: Mapping[str, Value] | None = None,
             headers: Sequence[tuple[str, str]] = ()) -> Call:
        """Call ``operation`` (as the feature spells it) over ``binding`` (its label) with the
        named value set, or with exactly ``arguments`` (a parameter they do not name is left
        out of the request), plus ``headers``; judge the exchange against ``rules_``."""
        op = self.contract.find(operation)
        if op is None:
            raise UsageError(f"the feature names {operation!r}, which is not an operation of "
                             f"the {self.contract.name} contract")
        how = Binding.parse(binding)
        variant = VALUE_SETS.get((values or "plain").lower())
        if variant is None:
            raise UsageError(f"unknown value set {values!r} (use {', '.join(VALUE_SETS)})")
        if not self.settings.selection.allows(op.name, how.label):
            left_out(f"{op.name} x {how.label}")
        exchange = self._send(op, how, variant, arguments, headers)
        if isinstance(exchange, Call):  # no usable answer: its finding says why
            return exchange
        control = None
        if variant != VALUE_SETS["plain"] and exchange.response.status != 200:
            # Judged by behaviour, not by fault text: does the same call with plain values
            # succeed? Then only these values are refused, which the spec leaves open (4.10).
            sent = self._send(op, how, VALUE_SETS["plain"])
            control = sent if isinstance(sent, Exchange) else None
        found = rules.judge(exchange, self.contract, intended=(op, how),
                            rules=rules.with_passive(rules_), control=control,
                            profile=self.report.profile if self.report else rules.SPEC)
        self._record(exchange, found)
        return Call(op, how, exchange, found, control)

    def _send(self, op: Operation, how: Binding, variant: int,
              arguments: Mapping[str, Value] | None = None,
              headers: Sequence[tuple[str, str]] = ()) -> Exchange | Call:
        """The exchange, or (no answer, or one over the size cap) a Call holding its one
        finding. A run that must stop (silent target, TLS) ends pytest here."""
        if arguments is None:
            arguments = self.settings.values.apply(op, sample_arguments(op, variant, how.value))
            request = build_request(self.contract, op, arguments, how, self.base_url)
        else:
            request = build_request(self.contract, op, arguments, how, self.base_url,
                                    leave_out_missing=True)
        for name, value in headers:
            request = request.with_header(name, value)
        started = time.monotonic()
        try:
            response = self._sender.send(request)
        except ResponseTooLarge as exc:
            return self._unanswered(op, how, request, sending.size_finding(exc, op.name, how.label))
        except TargetUnreachable as exc:
            return self._unanswered(op, how, request,
                                    sending.transport_finding(exc, op.name, how.label))
        except RunStopped as exc:
            self.settings.stopped = exc
            pytest.exit(str(exc), returncode=2)
        finally:  # a JUnit test case's time: that of the calls it judged
            if self.report is not None:
                self.report.add_seconds({(op.name, how.label): time.monotonic() - started})
        self.settings.answered += 1
        self.settings.strange += send.looks_wrong(response)
        return Exchange(request, response, source=self.base_url)

    def _unanswered(self, op: Operation, how: Binding, request, finding: Finding) -> Call:
        """A call without a usable answer: its one finding says why (the rules that judge
        an answer are not applicable)."""
        exchange = Exchange(request, None, source=self.base_url)
        self._record(exchange, [finding])
        return Call(op, how, exchange, [finding])

    def wsdl(self, endpoint: str) -> Call:
        """GET ``endpoint``?WSDL and judge it with the WSDL-* rules: what it says of the
        selected operations and bindings (``--operation`` keeps the WSDLs of the endpoints of
        the operations chosen)."""
        path, ops = self._endpoint(endpoint)
        url = f"{self.base_url.rstrip('/')}{path}?WSDL"
        exchange, error = self._get(url)
        if exchange.response is None:
            found = wsdl_rules.judge_endpoint(self.contract, path, error)
        else:
            found = wsdl_rules.judge_answer(self.contract, path, exchange.response, url,
                                            self.settings.selection)
        self._record(exchange, found)
        return Call(ops[0], Binding.HTTP_GET, exchange, found, endpoint=path)

    def odd(self, operation: str, binding: str, kind: str) -> Call:
        """Send ``operation`` over ``binding`` with the odd thing ``kind`` (a wrong SOAPAction,
        an unknown extra element...: ``odd_requests.KINDS``; or a row of the ASMX matrix, by
        its words) and judge the answer by how the real ASMX answers it."""
        op = self.contract.find(operation)
        if op is None:
            raise UsageError(f"the feature names {operation!r}, which is not an operation of "
                             f"the {self.contract.name} contract")
        how = Binding.parse(binding)
        if how.value not in self.contract.bindings_of(op):
            pytest.skip(f"{op.name} is not offered over {how.label}")
        if not self.settings.selection.allows(op.name, how.label):
            left_out(f"{op.name} x {how.label}")
        if kind not in odd_requests.KINDS:
            row = asmx_matrix.matrix().row(how, kind)
            if row is None:
                raise UsageError(f"the feature asks for {how.label} with {kind}: neither an "
                                 "odd request nor a row of the ASMX matrix")
            return self._matrix_call(op, row)
        try:
            odd = odd_requests.odd_request(  # with the run's values (--values), if any
                self.contract, op, how, kind, self.base_url,
                self.settings.values.apply(op, sample_arguments(op, 0, how.value)),
                self.settings.selection)
        except ValueError as exc:
            raise UsageError(f"the feature asks for {exc}") from None
        if odd is None:  # no other operation the run may name: nothing to send
            rule = odd_requests.KINDS[kind]
            return self._not_applicable(op, how, rule, f"{op.name} {how.label} with {kind}",
                                        f"{kind} does not apply: no other operation to name")
        return self._odd_call(odd)

    def _not_applicable(self, op: Operation, how: Binding, rule: str, label: str,
                        cause: str, values: Mapping[str, Value] | None = None) -> Call:
        """A scenario whose request does not apply to ``op``: judged not applicable by
        ``rule``, nothing sent."""
        found = Finding(rule, Verdict.NOT_APPLICABLE, op.name, how.label,
                        message=f"{op.name}: {cause}", cause=cause)
        if self.report is not None:  # a check, not a call: nothing was sent
            self.report.add(found)
        request = build_request(self.contract, op, values if values is not None else
                                sample_arguments(op, 0, how.value), how, self.base_url)
        return Call(op, how, Exchange(request, None), [found], label=label)

    def _matrix_call(self, op: Operation, row: asmx_matrix.Row) -> Call:
        """A row of the ASMX matrix for ``op`` (with the run's values), judged against the
        target's own answer to the equivalent spec call (sent once per run)."""
        values = self.settings.values.apply(op, sample_arguments(op, 0, row.binding.value))
        mreq = asmx_matrix.build(self.contract, op, row, self.base_url,
                                 {k: str(v) for k, v in values.items()})
        label = f"{op.name} {row.binding.label} with {row.words}"
        if mreq is None:  # e.g. no parameter to rename: judged not applicable, nothing sent
            return self._not_applicable(op, row.binding, row.rule, label,
                                        f"{row.label} does not apply to the operation", values)
        exchange, error = self._sent(mreq.request, op, row.binding)
        control = self._spec_call(mreq.control, op, row.binding)
        answers = asmx_matrix.Answers(
            exchange.response, control.response if control is not None else None,
            getattr(self._spec_call(mreq.plain, op, row.binding), "response", None))
        found = [asmx_matrix.judge(mreq, answers, source=self.base_url)]
        if exchange.response is None:
            found.insert(0, sending.transport_finding(TargetUnreachable(error), op.name,
                                                      row.binding.label))
        self._record(exchange, found)
        return Call(op, row.binding, exchange, found, control, label=label)

    def _spec_call(self, request: HttpRequest | None, op: Operation, how: Binding
                   ) -> Exchange | None:
        """A spec call the ASMX matrix compares with, sent once per run (rows share them)."""
        if request is None:
            return None
        key = (request.method, request.url, request.body)
        if key not in self._controls:
            self._controls[key] = self._sent(request, op, how)[0]
        return self._controls[key]

    def bare_get(self, endpoint: str) -> Call:
        """GET ``endpoint`` without an operation in its path, judged as ASMX answers it."""
        path, _ = self._endpoint(endpoint)
        if not self.settings.selection.allows(None, Binding.HTTP_GET.label):
            left_out("HTTP GET")
        return self._odd_call(odd_requests.bare_get(self.contract, path, self.base_url))

    def _odd_call(self, odd: odd_requests.OddRequest) -> Call:
        exchange, error = self._sent(odd.request, odd.operation, odd.binding)
        found = [odd_requests.judge(odd, exchange.response, source=self.base_url)]
        if exchange.response is None:
            found.insert(0, sending.transport_finding(
                TargetUnreachable(error), odd.endpoint or odd.operation.name, odd.binding.label))
        self._record(exchange, found)
        label = f"{odd.endpoint} bare GET" if odd.endpoint else \
            f"{odd.operation.name} {odd.binding.label} with {odd.kind}"
        return Call(odd.operation, odd.binding, exchange, found, label=label)

    def _endpoint(self, endpoint: str) -> tuple[str, tuple[Operation, ...]]:
        """The contract's path of ``endpoint`` as a feature spells it, and its operations;
        the scenario is skipped when none of them is selected (``--operation``)."""
        path = self.contract.endpoint(endpoint)
        if path is None:
            raise UsageError(f"the feature names {endpoint!r}, which is not an endpoint of the "
                             f"{self.contract.name} contract")
        ops = self.contract.endpoints[path]
        if not any(self.settings.selection.allows(op.name, None) for op in ops):
            left_out(f"every operation of {path}")
        return path, ops

    def _get(self, url: str) -> tuple[Exchange, str]:
        """A GET of ``url`` as an Exchange (no response: why, in the second place). A run that
        must stop (silent target, TLS) ends pytest here."""
        return self._sent(HttpRequest("GET", url, (("Host", url.split("/")[2]),)))

    def _sent(self, request, op: Operation | None = None, how: Binding | None = None
              ) -> tuple[Exchange, str]:
        """``request`` sent as an Exchange (no response: why, in the second place). A run
        that must stop (silent target, TLS) ends pytest here."""
        started = time.monotonic()
        try:
            return Exchange(request, self._sender.send(request), source=self.base_url), ""
        except (ResponseTooLarge, TargetUnreachable) as exc:
            return Exchange(request, None, source=self.base_url), str(exc)
        except RunStopped as exc:
            self.settings.stopped = exc
            pytest.exit(str(exc), returncode=2)
        finally:
            if self.report is not None and op is not None and how is not None:
                self.report.add_seconds({(op.name, how.label): time.monotonic() - started})

    def _record(self, exchange: Exchange, findings: list[Finding]) -> None:
        """Into the run's Report; an identical finding on an identical request counts once
        (two features may ask the very same request and judge the same rule on it)."""
        if self.report is None:
            return
        self.report.exchanges += 1
        self.report.observe(exchange.request, exchange.response,
                            next((f.operation for f in findings if f.operation), None))
        sent = (exchange.request.method, exchange.request.url, exchange.request.headers,
                exchange.request.body)
        number = self.report.exchanges  # the call's number in the run: its findings' index
        for f in (replace(f, index=number) if f.index is None else f for f in findings):
            if f.verdict is Verdict.FAILED:
                self.report.add_example(f, example_text(exchange.request, exchange.response,
                                                             f.operation))
            key = (sent, f.rule, f.operation, f.binding, f.verdict, f.expected, f.actual,
                   f.message)
            if key not in self._seen:
                self._seen.add(key)
                self.report.add(f)


def sensitive_values(contract: Contract, values: Values) -> list[str]:
    """The texts ``--values`` gives the contract's sensitive parameters: secrets of the run."""
    found = []
    for op in contract.operations:
        for name, value in values.get(op.name).items():
            parameter = op.parameter(name)
            if parameter is not None and parameter.sensitive and isinstance(value, str | int):
                found.append(str(value))
    return found


def expect(rule: str, calls: Sequence[Call], tagged: Iterable[str]) -> list[Finding]:
    """Step verdict of ``rule`` over the scenario's calls: AssertionError listing each failure.

    The scenario must carry the rule's tag (so the report and the Gherkin agree) and the rule
    must have judged something."""
    if rule not in rules.catalogue_ids():
        raise AssertionError(f"{rule} is not a rule of the catalogue")
    if rule not in set(tagged):
        raise AssertionError(f"the scenario checks {rule} but is not tagged @{rule}")
    unanswered = [f for call in calls for f in call.findings if f.rule in sending.RULE_TITLES]
    if unanswered:  # one cause, said once: no answer to judge
        raise AssertionError("\n".join(f"[{f.rule}] {f.operation} x {f.binding}: {f.actual}"
                                        for f in unanswered))
    found = [f for call in calls for f in call.findings if f.rule == rule]
    if not found:
        raise AssertionError(f"{rule} judged nothing: no call in this scenario")
    failures = [f for f in found if f.verdict is Verdict.FAILED]
    if failures:
        raise AssertionError("\n".join(dict.fromkeys(_failure_line(f) for f in failures)))
    return found


def _failure_line(f: Finding) -> str:
    """``[R4-STATUS] <cause>: expected HTTP 200, actual HTTP 404 (at AuthCode x HTTP GET)``:
    what happened, the difference itself and where."""
    cause = cause_of(f)
    text = f"expected {f.expected}, actual {f.actual}" + (f" ({f.message})" if f.message
                                                          else "")
    if not cause.startswith("expected ") and cause not in f.actual:
        text = f"{cause}: {text}"
    where = f.endpoint or f"{f.operation} x {f.binding}"
    return f"[{f.rule}] {text} (at {where})"


# ------------------------------------------------------------------------------ the command


class CertifyPlugin:
    """Hands the run's Report to the steps and keeps pytest's own verdict."""

    def __init__(self, report: Report, settings: Settings | None = None,
                 contract: Contract | None = None, results: HeldResults | None = None) -> None:
        self.report = report
        #: Where allure-pytest's results wait for the end of the run (``HeldResults``).
        self.results = results
        self.settings = settings or Settings()
        self.contract = contract
        self.scenarios = {"passed": 0, "failed": 0, "skipped": 0}
        self.session: pytest.Session | None = None
        #: Scenarios the run would have run (an interrupted run says how many).
        self.planned: int | None = None
        self.progress: Progress | None = None

    @pytest.hookimpl(trylast=True)  # after allure-pytest's: hold_results swaps its logger
    def pytest_configure(self, config: pytest.Config) -> None:
        if self.results is not None and config.option.allure_report_dir:
            hold_results(config, self.results)
        config.stash[REPORT_KEY] = self.report
        config.stash[SETTINGS_KEY] = self.settings
        if self.contract is not None:
            config.stash[CONTRACT_KEY] = self.contract

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """--rule: keep the scenarios tagged with one of the chosen rule IDs."""
        if not self.settings.rules:
            return
        keep, drop = [], []
        for item in items:
            tags = {mark.args[0] for mark in item.iter_markers("rule")}
            (keep if tags & self.settings.rules else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":
            outcome = "left out" if report.skipped and LEFT_OUT in str(report.longrepr) \
                else report.outcome
            self.scenarios[outcome] = self.scenarios.get(outcome, 0) + 1
        if self.progress is not None and report.when == "teardown":
            self.progress.update()
        if self.progress is not None and report.failed:
            self.progress.update(0, failing=1)
        if stopping.requested() and self.session is not None:  # SIGINT/SIGTERM: the
            # scenario under way ends, no other starts (pytest: exit INTERRUPTED)
            self.session.shouldstop = f"interrupted by {stopping.signal_name()}"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """A signal while pytest collected: no scenario starts (pytest looks at shouldstop
        only after a test, so the first one ran and sent its calls after the user had asked
        to stop)."""
        if stopping.requested():
            raise session.Interrupted(f"interrupted by {stopping.signal_name()}")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.planned = len(session.items)
        self.progress = Progress("certify", total=self.planned, unit="scenarios",
                                 quiet=self.settings.quiet)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.progress is not None:
            self.progress.close()

    # A scenario of the user's own features (--features) is one finding of the Report: its
    # JUnit case, named after it (harness.scenarios.outcome).

    def pytest_bdd_before_scenario(self, request: pytest.FixtureRequest, feature: Any,
                                   scenario: Any) -> None:
        if self.settings.features:
            example = getattr(request.node, "callspec", None)
            params = example.params.get("_pytest_bdd_example", {}) if example else {}
            request.node.stash[_SCENARIO_RUN] = ScenarioRun(feature, scenario, params)

    def pytest_bdd_step_error(self, request: pytest.FixtureRequest, step: Any,
                              exception: Exception) -> None:
        run = request.node.stash.get(_SCENARIO_RUN, None)
        if run is not None and run.failed_step is None:
            run.failed_step, run.error = step, exception

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo
                                  ) -> Iterator[None]:
        report = yield
        run = item.stash.get(_SCENARIO_RUN, None)
        if run is not None and report.when == "call":
            reason = report.longrepr[2] if report.skipped and isinstance(
                report.longrepr, tuple) else ""
            self.report.add(scenario_finding(run, report.outcome, str(reason)))
            self.report.add_seconds({(run.name, run.feature_file): report.duration})
        return report


@dataclass
class Outputs:
    json: Path | None = None
    junit: Path | None = None
    report_dir: Path = DEFAULT_REPORT_DIR
    html: bool = True
    #: Allure's history file (or a folder holding one) the HTML report shows and extends.
    history: Path | None = None

    @property
    def allure_results(self) -> Path:
        return self.report_dir / "allure-results"

    @property
    def allure_report(self) -> Path:
        return self.report_dir / "allure-report"

    @property
    def features(self) -> Path:
        return self.report_dir / "features"


def feature_files() -> tuple[Path, ...]:
    """The features test_conformance binds: the packaged ones, or those of ``--features``."""
    return _run_features or tuple(FEATURES / name for name in (*FEATURE_FILES, WSDL_FEATURE))


#: The Background step ``harness scenarios`` writes before checks by pseudonym.
_PSEUDONYM_KEY_STEP = re.compile(r'the recorded values are pseudonyms under key "([0-9a-f]+)"')


def features_key(features: Iterable[Path]) -> bytes | None:
    """The key of the first recording whose pseudonyms ``features`` check (``the recorded
    values are pseudonyms under key "<key id>"``) that the key store holds: the run's key, so a
    failure's message and its attachments show the live value by the same pseudonym, the
    recording's. None: no such step, or no such key at hand."""
    from harness.traffic.keys import key_of_id

    for path in features:
        for found in _PSEUDONYM_KEY_STEP.finditer(path.read_text("utf-8", "replace")):
            key = key_of_id(found.group(1))
            if key is not None:
                return key
    return None


def user_features(directory: Path) -> tuple[Path, ...]:
    """The ``*.feature`` files of a folder of the user's (the packaged step glue runs them);
    UsageError, naming the file and the problem, when one cannot be read as Gherkin."""
    from pytest_bdd.exceptions import GherkinParseError
    from pytest_bdd.parser import FeatureParser

    if not directory.is_dir():
        raise UsageError(f"--features {directory}: not a folder")
    found = tuple(sorted(directory.resolve().glob("*.feature")))
    if not found:
        raise UsageError(f"--features {directory}: no *.feature file in it")
    for path in found:
        check_feature_file(path)
        try:
            FeatureParser(str(path.parent), path.name).parse()
        except GherkinParseError as exc:  # FILE:LINE: what is wrong, the line
            said = re.sub(r"^(Unknown parsing error: )?(Parser errors: )?(\(\d+:\d+\): )?", "",
                          " ".join(exc.message.split())).rstrip(".")
            if said.startswith(("Unexpected token", "Multiple features")):
                said = ("a line Gherkin cannot read (Feature:, Scenario:, Examples: end with a "
                        "colon; a step starts with Given, When, Then, And or But)")
            raise UsageError(f"{path}:{exc.line}: {said[:200]}: "
                             f"{exc.line_content.strip()[:100]!r}") from None
        except (OSError, UnicodeError) as exc:
            raise UsageError(f"--features: {path}: {' '.join(str(exc).split())[:200]}") from None
    return found


#: A feature file's bounds, checked before Gherkin reads it (and pytest-bdd again, whole): a
#: team's feature is a few KB, ``harness scenarios`` writes at most 200 examples an operation.
MAX_FEATURE_BYTES = 2 << 20
MAX_FEATURE_LINES = 20_000
#: Tags over one scenario, feature or Examples: pytest marks an item with each, and that
#: costs the square of their number (100,000 took minutes).
MAX_TAGS = 1_000
_TAG_LINE = re.compile(r"\s*@")


def check_feature_file(path: Path) -> None:
    """UsageError (one line) for a ``*.feature`` that is no regular file (a link to /dev/zero,
    a FIFO that would never end, a folder) or is over the bounds above."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError as exc:
        raise UsageError(f"--features: {path}: {exc.strerror or exc}") from None
    if not regular:
        raise UsageError(f"--features: {path} is not a regular file (a device, a FIFO or a "
                         "folder): refused")
    text = read_limited(path, MAX_FEATURE_BYTES, "--features: feature file")
    lines = text.count(b"\n") + (not text.endswith(b"\n"))
    if lines > MAX_FEATURE_LINES:
        raise UsageError(f"--features: {path} has {lines:,} lines (at most "
                         f"{MAX_FEATURE_LINES:,} are read)")
    tags, first = 0, 0
    for number, line in enumerate(text.splitlines(), 1):
        if _TAG_LINE.match(line.decode("utf-8", "replace")):
            tags, first = tags + line.count(b"@"), first or number
            if tags > MAX_TAGS:
                raise UsageError(f"{path}:{first}: more than {MAX_TAGS:,} tags on one "
                                 "scenario, feature or Examples")
        elif line.strip() and not line.lstrip().startswith(b"#"):
            tags, first = 0, 0


def certify(target: str | None, contract: Contract | str | None, outputs: Outputs,
            stream=None, settings: Settings | None = None,
            profile: Profile | None = None, renderer: Renderer | None = None) -> int:
    """Run the features against ``target`` (the embedded reference when None); exit status.

    ``contract``: the service's Contract (a namespace string, or None, means School Mobile
    under that namespace). ``stream``: where the console report goes (default: sys.stdout as
    it is at the call, not at import: a test's capture replaces it). ``renderer``: the HTML
    renderer, started ahead by the caller (else here, to load while the features run)."""
    if not outputs.html or renderer is not None:
        return _certify(target, contract, outputs, stream, settings, profile, renderer)
    with Renderer() as renderer:
        return _certify(target, contract, outputs, stream, settings, profile, renderer)


def _certify(target: str | None, contract: Contract | str | None, outputs: Outputs,
             stream, settings: Settings | None, profile: Profile | None,
             renderer: Renderer | None) -> int:
    stream = sys.stdout if stream is None else stream
    if not isinstance(contract, Contract):
        contract = school_mobile(contract)
    settings = settings or Settings()
    unknown = sorted(settings.rules - rules.catalogue_ids())
    if unknown:
        raise UsageError(f"--rule {unknown[0]} is not a rule ID (see --list-rules)")
    features = settings.features or _contract_features(contract, outputs.features)
    # From here to the last report a signal only asks the run to stop (stopping.cooperative):
    # the scenario under way ends, and what ran is reported, marked interrupted; a signal after
    # the verdict leaves it as it is. Either way certify exits 130/143 (_reports).
    with stopping.cooperative(), contextlib.ExitStack() as reference:
        with stopping.interruptible():  # reaching the target: nothing ran yet
            url = reference.enter_context(target_or_reference(target, contract, settings.send))
        if stopping.requested():  # as the target was reached: nothing ran, nothing is set aside
            stopping.interrupted_line("certify")
            return stopping.exit_code()
        shown = url if target else f"embedded reference at {url}"
        report = Report("certify", shown, titles=rules.titles() | sending.RULE_TITLES
                        | {SCENARIO: SCENARIO_TITLE},
                        profile=profile, environment=settings.send.environment,
                        namespace=contract.namespace)
        report.scope = selection_scope(contract, settings.selection, settings.rules,
                                       len(rules.catalogue_ids()))
        # Every output shows a secret by its pseudonym (capture's scheme) under --key-file's
        # key or a key of this run never written: the values --values sends among them.
        redaction = ReportRedaction(contract, settings.key or secrets.token_bytes(KEY_BYTES))
        redaction.add(sensitive_values(contract, settings.values))
        report.redaction = redaction
        results = HeldResults(outputs.allure_results)
        set_aside(outputs.allure_results)  # the previous run's: deleted once these are written
        plugin = CertifyPlugin(report, settings, contract, results)
        args = [str(CONFORMANCE_TESTS), "-c", str(PYTEST_INI), "--rootdir", str(STEPS.parent),
                *(a for name in PLUGINS for a in ("-p", name)), "-q", "--tb=no", "-rN",
                "--no-header", "-p", "no:cacheprovider", "-W", "ignore",
                # Their only output is warnings, which -W ignore drops; at the end they ran a
                # full garbage collection each (0.1-0.2 s) to find any.
                "-p", "no:unraisableexception", "-p", "no:threadexception",
                "--target", url, "--namespace", contract.namespace,
                "--alluredir", str(outputs.allure_results), "--clean-alluredir"]
        if settings.maxfail:
            args += ["--maxfail", str(settings.maxfail)]
        print(f"certify: {contract.name}, {shown}, namespace {contract.namespace}; "
              f"{len(features)} features" + ("" if settings.features else
                                             f" written in {outputs.features}"),
              file=stream, flush=True)
        with redacting_reports(redaction):
            try:
                code = _run_pytest(args, plugin, stream, features)
            finally:  # tidied and through the redaction (a stopped run's too), written once
                results.write(redaction.text, warning_label=WARNING_LABEL)
        _conclude(report, settings, plugin, code)
        write_overview(outputs.allure_results, report, namespace=contract.namespace)
        if renderer is not None and not stopping.requested():
            # Node renders while the reference stops and the rest is said
            renderer.start(outputs.allure_results, outputs.allure_report,
                           name="harness certify", history=outputs.history)
        discard_set_aside(outputs.allure_results)
        reference.close()
        return _reports(report, settings, plugin, outputs, stream, shown, renderer)


def _reports(report: Report, settings: Settings, plugin: CertifyPlugin, outputs: Outputs,
             stream, shown: str, renderer: Renderer | None) -> int:
    """The console, JSON and JUnit reports and the HTML page of the run; its exit status. A
    signal (in ``stopping.cooperative``) lets the first ones be written and stops the HTML
    render; the last line says what was written, and the status is 130/143."""
    print(file=stream)
    print_report(report, stream)
    line = send.wrong_target_line(shown, settings.strange, settings.answered)
    if line:
        print(f"certify: {line}", file=stream)
    if outputs.json:
        write_json(report, outputs.json)
        print(f"certify: JSON findings in {outputs.json}", file=stream)
    if outputs.junit:
        write_junit(report, outputs.junit)
        print(f"certify: JUnit XML in {outputs.junit}", file=stream)
    print(f"certify: Allure results in {outputs.allure_results}", file=stream)
    html_owed = renderer is not None and _render_html(outputs, stream, renderer)
    if stopping.requested():
        said = _interrupted_line(report, outputs, html_owed)
        if said:
            print(said, file=stream)
        return stopping.exit_code()
    status = report.exit_code
    if status == 0 and plugin.scenarios.get("failed"):
        print(f"certify: {plugin.scenarios['failed']} scenario(s) failed without a rule "
              "failure (see the pytest lines above)", file=stream)
        status = 1
    return status


def _interrupted_line(report: Report, outputs: Outputs, html_owed: bool) -> str | None:
    """What a signal left unwritten: the HTML page (and how to render it from the Allure
    results); said after the verdict line, whose verdict is INTERRUPTED when the signal came
    while the scenarios ran or before the results were written (then nothing more to say
    without an HTML page owed), else the whole run's."""
    name = stopping.signal_name()
    render = (f"harness report --results {outputs.allure_results} --out "
              f"{outputs.allure_report / 'index.html'}"
              + (f" --history {outputs.history}" if outputs.history else "") + " renders it")
    if report.interrupted:
        return f"certify: no HTML report: interrupted by {name} ({render})" if html_owed \
            else None
    return (f"certify: interrupted by {name} after the verdict: the reports above are written"
            + (f", the HTML report is not ({render})" if html_owed else ""))


def _conclude(report: Report, settings: Settings, plugin: CertifyPlugin,
              code: pytest.ExitCode) -> None:
    """The run's report finished, or why the run has none (raised)."""
    report.finish()
    if settings.stopped is not None:
        raise settings.stopped
    if stopping.requested() and code in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.OK,
                                         pytest.ExitCode.TESTS_FAILED):
        # The scenarios that ran are reported, marked interrupted: also when the signal came
        # after the last one, before the results were written (the verdict is not yet said)
        report.interrupt()
        report.meta["scenarios_planned"] = plugin.planned
        code = pytest.ExitCode.OK
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and settings.rules:
        raise UsageError("--rule selected no scenario")
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise HarnessError(f"the conformance features did not run (pytest exit {int(code)})")
    report.meta["scenarios"] = {k: n for k, n in plugin.scenarios.items() if n}
    if not plugin.scenarios.get("failed"):
        require_judged(report)


def _contract_features(contract: Contract, folder: Path) -> tuple[Path, ...]:
    """The packaged features written for ``contract`` into ``folder`` (next to the report)."""
    for name in (*FEATURE_FILES, WSDL_FEATURE):
        if not (FEATURES / name).is_file():
            raise UsageError(f"feature file {FEATURES / name} is missing")
    try:
        written = write_features(contract, FEATURES, FEATURE_FILES, folder)
    except OSError as exc:
        raise UsageError(f"cannot write the features into {folder}: "
                         f"{exc.strerror or exc}") from None
    return tuple(folder.resolve() / name for name in written)


def _run_pytest(args: list[str], plugin: CertifyPlugin, stream,
                features: tuple[Path, ...] = ()) -> pytest.ExitCode:
    """pytest.main with its terminal output sent to ``stream``."""
    if stream is sys.stdout:
        with _pytest_environment(features):
            return pytest.ExitCode(pytest.main(args, plugins=[plugin]))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), _pytest_environment(features):
        code = pytest.main(args, plugins=[plugin])
    stream.write(buffer.getvalue())
    return pytest.ExitCode(code)


@contextlib.contextmanager
def _pytest_environment(features: tuple[Path, ...] = ()) -> Iterator[None]:
    """The user's PYTEST_* variables are for their own tests, not for certify's run; the run's
    features are bound when pytest imports test_conformance (afresh: one process may run
    certify twice); pytest-bdd's step lookup and its reading of step functions' signatures
    are memoised (step_lookup)."""
    global _run_features
    _run_features = features
    for name, module in list(sys.modules.items()):  # its name depends on how pytest found it
        where = str(getattr(module, "__file__", None) or "/")
        # By its file's name first: resolving the path of each of ~1,000 modules took 40 ms.
        if where.endswith(CONFORMANCE_TESTS.name) and Path(where).resolve() == CONFORMANCE_TESTS:
            del sys.modules[name]
    saved = {k: os.environ.pop(k) for k in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS") if k in os.environ}
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with memoised_step_lookup(), memoised_signatures():
            yield
    finally:
        _run_features = ()
        os.environ.update(saved)
        if autoload is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload


def _render_html(outputs: Outputs, stream, renderer: Renderer) -> bool:
    """The page the renderer (started by _certify) makes, said on the console; whether a
    signal stopped it (or kept it from starting): the render is cut short at once, and Node
    dying of the same Ctrl-C (a terminal's process group) is no failure of Allure's."""
    html = None
    try:
        with stopping.interruptible():
            if stopping.requested():
                return True
            html = renderer.finish()
    except AllureMissing as exc:
        print(f"certify: no HTML report: {exc}", file=stream)
        return False
    except (KeyboardInterrupt, HarnessError):
        if not stopping.requested():
            raise
    if html is None:
        return True
    print(f"certify: HTML report in {html}", file=stream)
    return False
