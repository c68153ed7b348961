"""Real clients over every operation x binding, and the sample recordings made with them.

``python -m harness.capture.samples [DIR]`` starts the embedded reference, puts the real
``harness capture`` in front of it (reverse mode, redaction on), drives zeep over SOAP 1.1 and
1.2 and httpx over HTTP GET and POST for all 32 operation x binding pairs, then writes
``DIR/sample-all-bindings.jsonl`` (and its HAR export ``.har``). The tests drive the same clients.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, ParamType, sample_arguments, school_mobile
from harness.reference.wsdl import service_name

SAMPLE = "sample-all-bindings"


@dataclass(frozen=True)
class Call:
    """One call a client made: what the recording must say about it."""

    binding: Binding
    operation: Operation
    arguments: dict[str, str]
    status: int


def zeep_service(contract: Contract, reference_url: str, endpoint: str, binding: Binding,
                 address: str):
    """A zeep service proxy for ``endpoint`` over ``binding``: WSDL fetched from the reference,
    calls sent to ``address`` (the capture proxy)."""
    import requests
    import zeep
    from zeep.transports import Transport

    session = requests.Session()
    session.trust_env = False  # loopback only: no proxy from the environment
    client = zeep.Client(f"{reference_url}{endpoint}?WSDL", transport=Transport(session=session))
    suffix = "Soap" if binding is Binding.SOAP11 else "Soap12"
    qname = f"{{{contract.namespace}}}{service_name(endpoint)}{suffix}"
    return client.create_service(qname, f"{address}{endpoint}")


def zeep_arguments(op: Operation, arguments: dict[str, str]) -> dict[str, object]:
    return {p.name: int(arguments[p.name]) if p.type is ParamType.INT else arguments[p.name]
            for p in op.parameters}


def drive(contract: Contract, reference_url: str, proxy_url: str, *,
          arguments: Callable[[Operation], dict[str, str]] = sample_arguments) -> Iterator[Call]:
    """Every operation over every binding, by real clients, through ``proxy_url``."""
    services = {}
    with httpx.Client(base_url=proxy_url, trust_env=False, timeout=30) as http:
        for op in contract.operations:
            args = arguments(op)
            for binding in Binding:
                if binding.is_soap:
                    key = (op.endpoint, binding)
                    if key not in services:
                        services[key] = zeep_service(contract, reference_url, op.endpoint,
                                                     binding, proxy_url)
                    getattr(services[key], op.name)(**zeep_arguments(op, args))
                    status = 200  # zeep raises on a fault
                elif binding is Binding.HTTP_GET:
                    status = http.get(f"{op.endpoint}/{op.name}", params=args).status_code
                else:
                    status = http.post(f"{op.endpoint}/{op.name}", data=args).status_code
                yield Call(binding, op, args, status)


def make_samples(directory: Path, contract: Contract | None = None) -> list[Path]:
    from harness.capture.process import CaptureProcess, run_harness
    from harness.reference.server import running

    contract = contract or school_mobile()
    directory.mkdir(parents=True, exist_ok=True)
    recording, har = directory / f"{SAMPLE}.jsonl", directory / f"{SAMPLE}.har"
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / recording.name  # fresh file and key every time
        thrown_away = Path(tmp) / "key"  # not into the user's key store
        with running(contract) as reference, CaptureProcess(
                reference, staging, "--key-file", str(thrown_away)) as capture:
            calls = list(drive(contract, reference, capture.url))
            code, out, err = capture.stop()
        if code != 0:
            raise RuntimeError(f"capture failed: {err.strip()}")
        recording.write_bytes(staging.read_bytes())
    run_harness("export", recording, "-o", har)
    print(out.rstrip().splitlines()[-1] if out.strip() else "", file=sys.stderr)
    print(f"{len(calls)} calls recorded in {recording} and {har}", file=sys.stderr)
    return [recording, har]


if __name__ == "__main__":
    make_samples(Path(sys.argv[1] if len(sys.argv) > 1 else "recordings"))
