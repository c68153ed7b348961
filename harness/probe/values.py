"""Invalid and boundary values for each parameter, generated with Hypothesis from the contract's
types, and the search that shrinks a failure to a minimal case.

For an ``int`` parameter: 32-bit bounds and one past them, 5,000-digit integers, signs, decimals,
exponents, non-ASCII digits, whitespace and any text; for a ``string``: whitespace, non-ASCII,
control characters (which XML cannot carry: a SOAP call with one is malformed), long text.
Each value is sent given once, twice (duplicated) or not at all (missing).

What a sound target does with a value (``expectation``) follows ASMX: a SOAP call takes the first
of duplicated elements and binds a missing int as 0; GET/POST join duplicated values with ","
and refuse a missing parameter.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import HypothesisException, NoSuchExample

from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, Parameter, ParamType, sample_arguments
from harness.judge.words import shown_value
from harness.probe.cases import (
    Expect,
    Family,
    ProbeCase,
    envelope,
    escape_text,
    plain_request,
    with_body,
)
from harness.traffic.exchange import HttpRequest

# Hypothesis keeps caches in ./.hypothesis by default: a probe run from any folder must not
# leave one there (the example database is off; what remains is a cache, kept per user).
set_hypothesis_home_dir(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                        / "harness" / "hypothesis")

SHAPES = ("value", "duplicated", "missing")
#: Longest generated string: bounded, the probe is never a danger itself.
MAX_TEXT = 200

_INT_EDGES = [str(2**31 - 1), str(-(2**31)), str(2**31), str(-(2**31) - 1), "9" * 5000,
              "-" + "9" * 5000, " 7 ", "+7", "-0", "007", "1.5", "1e3", "0x1F", "1,000",
              "\u0661\u0662", "", " ", "\t", "seven"]
_TEXT_EDGES = ["", " ", "\t\n", "caf\u00e9", "\u65e5\u672c", "\u202e", "\ufeff", "\x00",
               "\x01", "\x1f", "a" * MAX_TEXT, "<a>", "&amp;", "%00", "'\"", "\u00a0"]


@dataclass(frozen=True)
class Generated:
    """One generated input for one parameter."""

    shape: str  # value | duplicated | missing
    value: str

    def describe(self) -> str:
        """``= 2147483648``, ``= NUL``, ``twice = 7``, ``missing``: the input in a detail's
        words (``words.shown_value``)."""
        if self.shape == "missing":
            return "missing"
        return ("twice " if self.shape == "duplicated" else "") + f"= {shown_value(self.value)}"


_INTEGERS = frozenset({ParamType.INT, ParamType.LONG, ParamType.SHORT, ParamType.BYTE,
                       ParamType.UNSIGNED_BYTE, ParamType.UNSIGNED_SHORT, ParamType.UNSIGNED_INT,
                       ParamType.UNSIGNED_LONG, ParamType.CHAR})


def strategy(param: Parameter) -> st.SearchStrategy[Generated]:
    """Hypothesis strategy of inputs for ``param``, from its type."""
    if param.type in _INTEGERS:
        values = st.one_of(st.sampled_from(_INT_EDGES),
                           st.integers(-(2**70), 2**70).map(str),
                           st.text(max_size=20))
    elif param.type is ParamType.STRING:
        values = st.one_of(st.sampled_from(_TEXT_EDGES), st.text(max_size=MAX_TEXT))
    else:  # another simple type: edges of both kinds, the enumeration's members, any text
        values = st.one_of(st.sampled_from([*_INT_EDGES[:8], *param.values, "true", "1.5"]),
                           st.text(max_size=40))
    return st.builds(Generated, st.sampled_from(SHAPES), values)


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def expectation(param: Parameter, binding: Binding, given: Generated) -> Expect:
    """REFUSAL when the input is certainly invalid as ASMX reads it, else ANY."""
    if given.shape == "missing":
        return Expect.ANY if binding.is_soap else Expect.REFUSAL
    if binding.is_soap and _XML_ILLEGAL.search(given.value):
        return Expect.REFUSAL  # the document is not well-formed XML
    if param.type is ParamType.STRING:
        return Expect.ANY
    value = given.value
    if given.shape == "duplicated" and not binding.is_soap:
        value = f"{value},{value}"
    # .NET's number parsing also takes trailing NULs: never count on refusing those.
    read = param.accepts(value.rstrip("\x00"), http=not binding.is_soap)
    return Expect.ANY if read else Expect.REFUSAL


def value_case(contract: Contract, op: Operation, binding: Binding, param: Parameter,
               given: Generated, base: str) -> ProbeCase:
    plain = plain_request(contract, op, binding, base)
    values = sample_arguments(op)
    pairs: list[tuple[str, str]] = []
    for p in op.parameters:
        if p.name != param.name:
            pairs.append((p.name, values[p.name]))
        elif given.shape != "missing":
            pairs += [(p.name, given.value)] * (2 if given.shape == "duplicated" else 1)
    request = _with_pairs(contract, op, binding, plain, pairs)
    return ProbeCase(f"value/{param.name}/{given.shape}", Family.VALUE, op, binding, request,
                     expectation(param, binding, given),
                     f"{param.name} ({param.type.value}) {given.describe()}")


def _with_pairs(contract: Contract, op: Operation, binding: Binding, plain: HttpRequest,
                pairs: list[tuple[str, str]]) -> HttpRequest:
    if binding.is_soap:
        params = "".join(f"<{name}>{escape_text(value)}</{name}>" for name, value in pairs)
        return with_body(plain, envelope(contract, op, binding, params))
    encoded = urlencode(pairs)
    if binding is Binding.HTTP_GET:
        parts = urlsplit(plain.url)
        return HttpRequest(plain.method, urlunsplit(parts._replace(query=encoded)),
                           plain.headers, plain.body)
    return with_body(plain, encoded.encode("ascii"))


@dataclass(frozen=True)
class Target:
    """One operation x binding x parameter to generate inputs for."""

    operation: Operation
    binding: Binding
    parameter: Parameter


def targets(contract: Contract) -> list[Target]:
    """Every simple parameter of every operation over each binding offering it, typed
    parameters (int, ...) first."""
    found = [Target(op, Binding(binding), p) for op in contract.operations
             for binding in contract.bindings_of(op) for p in op.parameters
             if p.type.is_simple]
    return sorted(found, key=lambda t: t.parameter.type is ParamType.STRING)


def search(target: Target, try_case: Callable[[Generated], bool], examples: int,
           seed: int | None = None) -> Generated | None:
    """Up to ``examples`` inputs for ``target``; the first one ``try_case`` finds failing is
    shrunk by Hypothesis to a minimal failing input, which is returned (None: none failed).

    ``try_case`` sends the input and judges it; it is called again for inputs already tried
    only through its own cache (each input is sent once)."""
    tried: dict[Generated, bool] = {}
    smallest: list[Generated] = []

    def condition(given: Generated) -> bool:
        if given not in tried:
            tried[given] = try_case(given)
            if tried[given]:
                smallest[:] = [given]
        return tried[given]

    chosen = settings(max_examples=examples, database=None, deadline=None,
                      derandomize=seed is None, phases=(Phase.generate, Phase.shrink),
                      suppress_health_check=list(HealthCheck), print_blob=False)
    try:
        return find(strategy(target.parameter), condition, settings=chosen,
                    random=None if seed is None else random.Random(seed))
    except NoSuchExample:
        return None
    except HypothesisException:  # e.g. a target that failed once and not again (flaky)
        return smallest[0] if smallest else None
