"""``harness serve``: run the embedded reference implementation."""

from __future__ import annotations

import argparse
import sys

from harness.commands import add_command
from harness.commands.options import add_contract_options, add_listen_options, contract_from


def register(sub) -> None:
    p = add_command(sub, "serve", "Serve the embedded reference implementation of a "
                    "contract (default School Mobile: all 8 operations), all 4 bindings, WSDL "
                    "at <endpoint>?WSDL.",
                    "harness serve --port 8000   # then curl "
                    "'http://127.0.0.1:8000/PushNotificationMobile.asmx/GetTokenDevice?id=7'")
    add_listen_options(p)
    add_contract_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.reference.server import serve

    contract = contract_from(args)
    def announce(url: str) -> None:
        print(f"harness serve: reference of {contract.name} on {url} "
              f"(namespace {contract.namespace}); Ctrl-C stops it", file=sys.stderr, flush=True)

    serve(contract, args.host, args.port, announce=announce)
    return 0
