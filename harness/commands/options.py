"""Option groups shared by the subcommands, so every command spells them alike."""

from __future__ import annotations

import argparse

from harness.contract.model import Contract
from harness.errors import UsageError


def add_contract_options(p: argparse.ArgumentParser) -> None:
    """--contract FILE | --wsdl URL|FILE (repeatable) and --namespace: the service the command
    works with (default: the School Mobile contract shipped with the harness)."""
    group = p.add_argument_group("contract (default: the School Mobile contract)")
    group.add_argument("--contract", metavar="FILE",
                       help="contract file (JSON, as `harness contract` writes it)")
    group.add_argument("--wsdl", metavar="URL|FILE", action="append", default=[],
                       help="derive the contract from this WSDL (an endpoint URL gets ?WSDL); "
                            "repeat for each .asmx endpoint of the service")
    group.add_argument("--namespace", metavar="URI", default=None,
                       help="service namespace (default: the contract's, http://tempuri.org/ "
                            "for School Mobile)")


def contract_from(args: argparse.Namespace) -> Contract:
    """The contract the options name."""
    from harness.contract.model import load, school_mobile

    if args.contract and args.wsdl:
        raise UsageError("give --contract FILE or --wsdl URL, not both")
    if args.namespace is not None and not args.namespace.strip():
        raise UsageError("--namespace is empty")
    if args.contract:
        contract = load(args.contract)
    elif args.wsdl:
        from harness.contract.wsdl_import import import_wsdls

        contract = import_wsdls(args.wsdl)
    else:
        contract = school_mobile()
    return contract.with_namespace(args.namespace)
