"""``harness shadow``: live traffic answered by the primary, mirrored to a candidate, compared
as it flows (diff's judgement), both answers recorded."""

from __future__ import annotations

import argparse
import secrets
from datetime import datetime

from harness.commands import add_command
from harness.commands.capture import add_recording_options
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import (
    MAX_CONCURRENCY,
    add_contract_options,
    add_send_options,
    check_outputs,
    contract_for_target,
    port,
    positive,
    require,
    role_target,
    send_options,
)
from harness.errors import UsageError

#: The longest --duration: 90 days (a migration's shadow runs for weeks, not years).
MAX_DURATION = 90 * 86_400.0


def register(sub) -> None:
    p = add_command(
        sub, "shadow", "Put a proxy in front of the primary (the legacy deployment): clients "
        "get the primary's answers, untouched, while each call is mirrored to the candidate "
        "(the new one) and compared as it flows, with diff's judgement (XML aligned, faults, "
        "status, Content-Type; noise learned from --secondary). A progress line every few "
        "seconds, a live view on 127.0.0.1, one recording with both answers; on Ctrl-C, "
        "SIGTERM or --duration the report (console, JSON, JUnit, Allure): exit 1 when the "
        "candidate differs, 0 when it does not.",
        "harness shadow --primary https://legacy.example/School --candidate "
        "https://new.example/School --secondary https://legacy2.example/School "
        "--skip-operation AuthCode --out shadow.jsonl --json reports/shadow.json"
        "   # then point the app at http://127.0.0.1:8080")
    p.add_argument("--primary", metavar="URL",
                   help="base URL of the implementation that answers the clients (the legacy "
                        "one; required)")
    p.add_argument("--candidate", metavar="URL|env:NAME",
                   help="base URL of the implementation each call is mirrored to (required); "
                        "env:NAME: the target of the config file's [env.NAME], sent with its "
                        "credentials, headers and TLS")
    p.add_argument("--secondary", metavar="URL|env:NAME",
                   help="a second instance of the primary, mirrored to as well: what differs "
                        "between it and the primary is noise, not held against the candidate")
    p.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="where the proxy listens (default 127.0.0.1:8080; port 0 picks one; "
                        "nothing listens beyond loopback unless you say so)")
    p.add_argument("-o", "--out", metavar="RECORDING",
                   help="recording to append to: every exchange with the primary's answer "
                        "and, in meta.shadow, the candidate's (default "
                        "shadow-YYYYMMDD-HHMMSS.jsonl)")
    mirror = p.add_argument_group("mirror")
    mirror.add_argument("--mirror-operation", action="append", default=[], metavar="NAME",
                        help="mirror only this operation's calls (repeatable; default every "
                             "call, service descriptions included)")
    mirror.add_argument("--skip-operation", action="append", default=[], metavar="NAME",
                        help="never mirror this operation (repeatable), e.g. AuthCode: a "
                             "mirrored AuthCode sends a second code if the candidate is wired "
                             "to the real SMS gateway")
    mirror.add_argument("--queue", type=positive(int, 1_000_000), default=1000, metavar="N",
                        help="calls waiting for the mirror at most (default 1000); a call "
                             "that finds it full is answered as always, recorded, and counted "
                             "as not mirrored")
    mirror.add_argument("--jobs", type=positive(int, MAX_CONCURRENCY), default=8,
                        help="calls mirrored at once (default 8)")
    mirror.add_argument("--duration", type=positive(float, MAX_DURATION), metavar="S",
                        help="stop and report after S seconds (default: on Ctrl-C or SIGTERM)")
    mirror.add_argument("--ignore", action="append", default=[], metavar="PATH_GLOB",
                        help="element path pattern not compared, e.g. '*/Header' (repeatable)")
    mirror.add_argument("--ignore-values", action="append", default=[], metavar="PATH_GLOB",
                        help="element path pattern whose text is not compared while its "
                             "structure still is (repeatable)")
    out = p.add_argument_group("reports and recording")
    out.add_argument("--json", metavar="FILE", help="write the JSON report here")
    out.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    out.add_argument("--allure-dir", default="reports/allure-results", metavar="DIR",
                     help="write Allure results here for `harness report` "
                          "(default reports/allure-results; '' to skip)")
    out.add_argument("--quiet", action="store_true",
                     help="no progress line (a bar on a terminal, else a line every 5 s on "
                          "stderr: calls mirrored, differing, the causes so far)")
    out.add_argument("--live-port", type=port(0), default=8081, metavar="PORT",
                     help="the live view's port, always on 127.0.0.1 (default 8081; 0 picks "
                          "one; its URL, with its access token, is printed at start)")
    out.add_argument("--no-live", action="store_true", help="no live view")
    add_recording_options(out, also="; such a call is not mirrored")
    add_contract_options(p)
    add_send_options(p, select=False)
    add_profile_options(p)
    p.set_defaults(run=run)


def _primary_tls(args: argparse.Namespace) -> dict[str, object]:
    """mitmproxy's options for the primary's TLS: --insecure and --cacert hold for it as for
    the mirror."""
    from pathlib import Path

    options: dict[str, object] = {"ssl_insecure": True} if args.insecure else {}
    if args.cacert:
        options["ssl_verify_upstream_trusted_ca"] = str(Path(args.cacert).resolve())
    return options


def run(args: argparse.Namespace) -> int:
    from harness.capture.proxy import CaptureSettings, parse_listen
    from harness.contract.selection import Selection
    from harness.diff.engine import TITLES
    from harness.shadow.proxy import run_shadow
    from harness.shadow.setup import MirrorOptions
    from harness.shadow.worker import COMPARED_RULE
    from harness.traffic.redaction import given_secrets
    from harness.traffic.send import base_url, check_reachable

    require(args, "primary", "candidate")
    check_outputs(args.json, args.junit)
    host, port = parse_listen(args.listen)
    options = send_options(args)
    # A role named env:NAME is sent with that environment's settings (per-target credentials)
    roles = {role: role_target(args, role) for role in ("primary", "candidate", "secondary")}
    for url, _ in filter(lambda pair: pair[0], roles.values()):
        base_url(url)  # a malformed URL: one line now
    for url, own in filter(lambda pair: pair[0], roles.values()):
        check_reachable(url, options=own or options)  # every target up before the ?WSDL line
    (primary, primary_options), candidate, secondary = (roles["primary"], roles["candidate"][0],
                                                         roles["secondary"][0])
    contract = contract_for_target(args, primary, primary_options or options,
                                   command="shadow")
    mirrored = Selection.parse(contract, args.mirror_operation,
                               flag="--mirror-operation").operations
    skipped = Selection.parse(contract, args.skip_operation, flag="--skip-operation").operations
    if mirrored and not mirrored - skipped:
        raise UsageError("every --mirror-operation is also a --skip-operation: nothing would "
                         "be mirrored")
    out = args.out or datetime.now().strftime("shadow-%Y%m%d-%H%M%S.jsonl")
    settings = CaptureSettings(out=out, upstream=base_url(primary), listen_host=host,
                               listen_port=port, redact=args.redact,
                               redact_names=args.redact_names, key_file=args.key_file,
                               max_body_mb=args.max_body_mb,
                               mitm_options=_primary_tls(args))
    mirror = MirrorOptions(
        primary=base_url(primary), candidate=base_url(candidate),
        secondary=base_url(secondary) if secondary else None,
        ignore=tuple(args.ignore), ignore_values=tuple(args.ignore_values), send=options,
        role_send={role: own for role, (_, own) in roles.items()
                   if own is not None and role != "primary"},
        jobs=args.jobs, queue=args.queue, mirror_operations=mirrored,
        skip_operations=skipped, profile=profile_of(args, [*TITLES, COMPARED_RULE]),
        json=args.json, junit=args.junit, allure_dir=args.allure_dir or None,
        live_port=None if args.no_live else args.live_port,
        live_token=secrets.token_urlsafe(18), quiet=args.quiet, given=given_secrets())
    return run_shadow(settings, mirror, contract, args.duration)

