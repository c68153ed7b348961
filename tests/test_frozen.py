"""``@frozen``: the exchange model's frozen dataclasses, built with one assignment."""

from __future__ import annotations

import dataclasses

import pytest

from harness.contract.bindings import Classification
from harness.frozen import frozen
from harness.traffic.exchange import HttpRequest, HttpResponse


@frozen
class Sample:
    name: str
    items: tuple[str, ...] = ()
    count: int = 0


@frozen
class WithFactory:
    items: list[str] = dataclasses.field(default_factory=list)


def test_frozen_builds_with_one_assignment_and_is_still_a_frozen_dataclass() -> None:
    sample = Sample("a", count=2)
    assert (sample.name, sample.items, sample.count) == ("a", (), 2)
    assert sample == Sample("a", (), 2) and hash(sample) == hash(Sample("a", (), 2))
    assert sample != Sample("b", (), 2) and repr(sample) == "Sample(name='a', items=(), count=2)"
    assert dataclasses.replace(sample, count=3) == Sample("a", count=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Sample()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Sample("a", nothing=1)  # type: ignore[call-arg]
    # the one-assignment __init__ replaced the dataclass's (one object.__setattr__ per field)
    assert Sample.__init__.__code__.co_names == ("_set",)


def test_what_the_fast_init_does_not_cover_keeps_the_dataclass_init() -> None:
    assert WithFactory().items == [] and WithFactory().items is not WithFactory().items
    assert "_set" not in WithFactory.__init__.__code__.co_names


@pytest.mark.parametrize("cls", [HttpRequest, HttpResponse, Classification])
def test_the_exchange_model_uses_it(cls: type) -> None:
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.__init__.__code__.co_names == ("_set",)
    request = HttpRequest("GET", "http://x/a.asmx/Op?x=1")
    assert request.headers == () and request.body == b"" and request.query == "x=1"
