"""A call a scenario's step made: its request and response, and the findings judged on it.

Certify makes them (``certify.engine.Service``); the steps' checks read them
(``harness.scenarios``) and the Allure bridge attaches them (``harness.reports``): plain data,
below all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.contract.bindings import Binding
from harness.contract.model import Operation
from harness.judge.findings import Finding
from harness.traffic.exchange import Exchange


@dataclass
class Call:
    """One request the features asked for, its response and the findings judged on it."""

    operation: Operation
    binding: Binding
    exchange: Exchange
    findings: list[Finding] = field(default_factory=list)
    #: The same call with plain values, made when this one (with other values) failed.
    control: Exchange | None = None
    #: The endpoint whose WSDL was fetched (``Service.wsdl``); None for an operation's call.
    endpoint: str | None = None
    #: How reports name it when not "<operation> <binding>" nor a WSDL (an odd request).
    label: str | None = None
