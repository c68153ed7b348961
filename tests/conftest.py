"""Fixtures shared by the harness's own tests: real servers on loopback, never mocks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.contract import Contract, school_mobile
from harness.reference.server import running


@pytest.fixture(scope="session")
def contract() -> Contract:
    return school_mobile()


@pytest.fixture(scope="session")
def reference_url(contract: Contract) -> Iterator[str]:
    """Base URL of the embedded reference, running on a free loopback port for the session."""
    with running(contract) as url:
        yield url
