"""Fixtures shared by the harness's own tests: real servers on loopback, never mocks."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.contract.model import Contract, school_mobile
from harness.reference.server import running
from harness.traffic.keys import KEY_STORE_ENV


@pytest.fixture(scope="session")
def contract() -> Contract:
    return school_mobile()


@pytest.fixture(scope="session")
def reference_url(contract: Contract) -> Iterator[str]:
    """Base URL of the embedded reference, running on a free loopback port for the session."""
    with running(contract) as url:
        yield url


# ------------------------------------------------------------------------ the interop lane
# Tests marked ``interop`` reach a real ASMX deployment of the service by URL (never our own
# reference): HARNESS_ASMX_URL is stock ASP.NET (customErrors RemoteOnly, as ../shared/asmx's
# ``default``), HARNESS_ASMX_CUSTOMERRORS_URL the same service with customErrors On.
# HARNESS_ASMX_HOME is a folder with start.sh/stop.sh (../shared/asmx) for tests that start a
# deployment of their own (ASMX_SERVICE=DIR start.sh PORT). .ci/run sets all three.

INTEROP_HELP = ("interop lane skipped: set HARNESS_ASMX_URL (and HARNESS_ASMX_CUSTOMERRORS_URL, "
                "HARNESS_ASMX_HOME) to a real ASMX deployment of the service, or run .ci/run, "
                "which starts ../shared/asmx")


def pytest_configure(config: pytest.Config) -> None:
    # Capture keeps pseudonym keys in a per-user key store: the tests' keys go to a folder of
    # their own (the commands they start inherit it), never to the user's.
    os.environ[KEY_STORE_ENV] = tempfile.mkdtemp(prefix="harness-test-keys-")
    config.addinivalue_line("markers", "interop: reaches a real ASMX deployment by URL "
                            "(HARNESS_ASMX_URL); skipped without one")


def pytest_report_header(config: pytest.Config) -> str:
    if os.environ.get("HARNESS_ASMX_URL"):
        return f"interop lane: {os.environ['HARNESS_ASMX_URL']}"
    return INTEROP_HELP


def _interop_env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        pytest.skip(INTEROP_HELP)
    return value.rstrip("/")


@pytest.fixture(scope="session")
def asmx_url() -> str:
    """A real, stock ASP.NET ASMX deployment of the service (customErrors RemoteOnly)."""
    return _interop_env("HARNESS_ASMX_URL")


@pytest.fixture(scope="session")
def asmx_customerrors_url() -> str:
    """The same real deployment with customErrors On (what a remote client sees)."""
    return _interop_env("HARNESS_ASMX_CUSTOMERRORS_URL")


@pytest.fixture(scope="session")
def asmx_home() -> Path:
    """The folder with start.sh/stop.sh that starts a real ASMX deployment of any .asmx folder."""
    home = Path(_interop_env("HARNESS_ASMX_HOME"))
    if not (home / "start.sh").is_file():
        pytest.skip(f"HARNESS_ASMX_HOME={home} has no start.sh")
    return home


# ------------------------------------------------- third-party stacks and a hardened ASMX
# spyne_url, node_soap_url, pysimplesoap_url, asmx_hardened_url: School Mobile on spyne, on Node's
# soap, on PySimpleSOAP and on the real ASMX runtime hardened for production (tests/stacks.py;
# servers under tests/services/).
# ------------------------------------------------------------------------ protected fronts
# basic_front, digest_front, ntlm_front, negotiate_front, cookie_front, mtls_front (with pki),
# wsse_front: the service behind authentication (tests/auth_servers.py).
from auth_servers import (  # noqa: E402, F401
    auth_upstream,
    basic_front,
    cookie_front,
    digest_front,
    mtls_front,
    negotiate_front,
    ntlm_front,
    pki,
    wsse_front,
)
from stacks import (  # noqa: E402, F401
    asmx_hardened_url,
    node_soap_url,
    pysimplesoap_url,
    spyne_url,
)
