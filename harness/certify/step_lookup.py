"""pytest-bdd's step lookup, memoised for the length of a certify run.

For every step of every scenario pytest-bdd lists all fixture names, asks pytest which of their
definitions the test can see, and tries the parser of each step definition among them on the
step's text (``pytest_bdd.scenario.find_fixturedefs_for_step``): on certify's 1,322 steps that
cost about as much as sending the 522 calls. What it finds depends only on the step (type and
text) and on the step definitions visible to the test, and those are the same for every test of
one module or class: step definitions are fixtures of modules, classes, conftests and plugins,
never of one test. So the definitions visible from a test's parent are listed once, and the
matching ones once per step text; a fixture registered meanwhile (a new name) starts the lists
afresh. The rest of the lookup is pytest-bdd's own: the matches are still ordered and injected
by it, pytest still picks the closest (a conftest's override wins as before), and each step's
arguments still come from the parser of the definition pytest picked.

pytest-bdd also reads the signature of the step's function twice for each step
(``inspect.signature``, about 7% of the scenarios' time); a function's signature does not change
during a run, so each is read once (``memoised_signatures``).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def memoised_step_lookup() -> Iterator[None]:
    """While the block runs, pytest-bdd's ``find_fixturedefs_for_step`` is memoised (as the
    module says); a pytest-bdd without that function is left as it is."""
    try:
        # importlib: ``pytest_bdd.scenario`` as an attribute is the function, not the module
        scenario = importlib.import_module("pytest_bdd.scenario")
        from pytest_bdd.compat import get_fixture_names, getfixturedefs
        from pytest_bdd.steps import step_function_context_registry
    except ImportError:
        yield
        return
    original = getattr(scenario, "find_fixturedefs_for_step", None)
    if original is None:
        yield
        return
    visible: dict[Any, list[tuple[Any, Any]]] = {}  # a test's parent: its step definitions
    matching: dict[tuple[Any, str | None, str], list[Any]] = {}  # and a step: those matching
    registered = [-1]  # fixture names when the lists were made

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> list[Any]:
        names = get_fixture_names(fixturemanager=fixturemanager)
        if len(names) != registered[0]:
            visible.clear()
            matching.clear()
            registered[0] = len(names)
        key = (node.parent, step.type, step.name)
        found = matching.get(key)
        if found is None:
            definitions = visible.get(node.parent)
            if definitions is None:
                definitions = visible[node.parent] = [
                    (fixturedef, context)
                    for name in names
                    for fixturedef in getfixturedefs(fixturemanager, name, node) or []
                    if (context := step_function_context_registry.get(fixturedef.func))
                    is not None]
            found = matching[key] = [
                fixturedef for fixturedef, context in definitions
                if (context.type is None or context.type == step.type)
                and context.parser.is_matching(step.name)]
        return found

    scenario.find_fixturedefs_for_step = find_fixturedefs_for_step
    try:
        yield
    finally:
        scenario.find_fixturedefs_for_step = original


#: The pytest-bdd modules that read step functions' signatures (``from inspect import
#: signature``): each one's ``signature`` is memoised.
SIGNATURE_READERS = ("pytest_bdd.scenario", "pytest_bdd.utils")


@contextlib.contextmanager
def memoised_signatures() -> Iterator[None]:
    """While the block runs, ``signature`` in SIGNATURE_READERS is read once per function
    (an object that cannot be a dictionary key is read each time, as before)."""
    patched: list[tuple[Any, Callable[..., Any]]] = []
    for name in SIGNATURE_READERS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        read = getattr(module, "signature", None)
        if callable(read):
            patched.append((module, read))
            module.signature = _once_per_function(read)
    try:
        yield
    finally:
        for module, read in patched:
            module.signature = read


def _once_per_function(read: Callable[..., Any]) -> Callable[..., Any]:
    known: dict[Any, Any] = {}

    def signature(function: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return read(function, *args, **kwargs)
        try:
            return known[function]
        except KeyError:
            found = known[function] = read(function)
            return found
        except TypeError:  # not hashable
            return read(function)

    return signature
