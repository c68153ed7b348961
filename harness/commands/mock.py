"""``harness mock``: serve recorded answers back, over every binding (service virtualization)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from harness.commands import add_command
from harness.commands.options import (
    add_auth_options,
    add_contract_options,
    add_listen_options,
    auth_options,
    check_outputs,
    contract_from,
)
from harness.errors import RecordingError, UsageError

#: Seconds of reading the recordings after which the start suggests --index-cache.
SLOW_LOAD = 10.0


def register(sub) -> None:
    p = add_command(sub, "mock", "Serve a recorded deployment back, and stubs written in the "
                    "contract's terms: each call answered with what a stub says, else with what "
                    "the recording says the deployment answered to the same operation and "
                    "values, over any of the 4 bindings, the binding rules kept as the "
                    "reference keeps them; the contract's WSDL at <endpoint>?WSDL. Faults on "
                    "demand (--fault), every call journalled and counted by the admin API "
                    "under /__harness/ (loopback only). A call nothing answers is refused and "
                    "said in one line (or forwarded to --fallback URL and recorded); Ctrl-C "
                    "stops the mock, exit 1 if any call was unmatched.",
                    "harness mock recordings/staging.jsonl --stubs stubs.toml --key-file "
                    "recordings/staging.jsonl.key --port 8000   # then point the app at "
                    "http://127.0.0.1:8000")
    p.add_argument("recordings", nargs="*", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files; a later one's answer to "
                        "the same call counts as more recent (none: stubs alone, or the "
                        "fallback)")
    add_listen_options(p)
    add_contract_options(p)
    g = p.add_argument_group("answers")
    g.add_argument("--stubs", action="append", default=[], metavar="FILE",
                   help="stubs in the contract's terms (TOML, or JSON): an operation, the "
                        "values it matches, what to answer (a result, a SOAP fault, an HTTP "
                        "status, a sequence), delays and faults; they come before the "
                        "recordings (repeatable)")
    g.add_argument("--fallback", type=_fallback, default="none", metavar="none|reference|URL",
                   help="a call nothing answers: refused (none, the default), answered by "
                        "the embedded reference (reference), or forwarded to a real "
                        "deployment at URL and answered with its reply (with --record, "
                        "recorded); counted either way")
    g.add_argument("--record", metavar="FILE",
                   help="with --fallback URL: append each forwarded exchange to this "
                        "recording, redacted as capture redacts (key: --key-file, else the "
                        "recording's own, else a new one in the key store), so the next mock "
                        "of it answers the call itself")
    add_auth_options(p)  # record-through: the --fallback deployment may ask for credentials
    g.add_argument("--sequence", action="store_true",
                   help="several recorded answers to one call: give them in recorded order, "
                        "one per call, then the last again (default: the last recorded "
                        "over the asking binding, else the last)")
    g.add_argument("--latency", choices=("none", "recorded"), default="none",
                   help="recorded: answer after the recorded duration of the exchange "
                        "(p50/p95 per operation said at the end); none (default): at once")
    g.add_argument("--descriptions", choices=("contract", "recorded"), default="contract",
                   help="?WSDL and the help page: generated from the contract (default) or as "
                        "recorded from the deployment, addresses rewritten to the mock (the "
                        "contract's when none was recorded)")
    g.add_argument("--key-file", metavar="FILE",
                   help="the recording's redaction key file, when it is not where capture put "
                        "it (default: found by the recording's key id in your key store, or "
                        "beside it): a call with real personal values then finds its "
                        "pseudonymised record")
    p.add_argument("--index-cache", metavar="FILE",
                   help="keep the index of the recordings in FILE: a later start with the same "
                        "recordings and contract reads it instead of reading every exchange "
                        "again (no recorded value is kept in it; mode 0600)")
    f = p.add_argument_group("faults and the journal")
    f.add_argument("--fault", action="append", default=[], metavar="FAULT",
                   help="do this to every call's answer: delay=1.5s (or a range 0.5s-2s), "
                        "reset, empty, malformed, trickle[=3s], 500, 503, fault[=Client]; "
                        ":PROBABILITY after it (reset:10%%) for a share of calls (repeatable)")
    f.add_argument("--seed", type=int, metavar="N",
                   help="seed of the random draws (probabilities, random delays): the same "
                        "faults on the same calls every run")
    f.add_argument("--journal", metavar="FILE",
                   help="append every call received as a JSON line (operation, binding, "
                        "values by meaning with sensitive ones as pseudonyms, how it was "
                        "answered, what was injected)")
    p.add_argument("--json", metavar="FILE", help="write what was answered as JSON at the end")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar while the recordings are read")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.mock import Mock, Options, load, summary
    from harness.mock.admin import create_mock_app
    from harness.mock.faults import parse_option
    from harness.mock.journal import Journal
    from harness.mock.stubs import Stubs, load_files
    from harness.progress import Progress
    from harness.reference.server import serve

    check_outputs(args.json, args.index_cache, args.journal)
    faults = tuple(parse_option(text) for text in args.fault)
    forwarding = args.fallback not in ("none", "reference")
    if not (args.recordings or args.stubs or forwarding):
        raise UsageError("nothing to answer with: give a recording, --stubs FILE or "
                         "--fallback URL")
    if not forwarding and any(getattr(args, name) for name in _AUTH_FLAGS):
        raise UsageError("--user, --cert, --wsse-user and --login-url are the --fallback "
                         "deployment's credentials: they need --fallback URL")
    if args.record and not forwarding:
        raise UsageError("--record needs --fallback URL: it records what the deployment "
                         "there answers")
    contract = contract_from(args)
    stubs = Stubs(load_files(contract, args.stubs))
    headers = _headers(args.recordings)
    # with no recording, --key-file is the key --record writes with (no lookup needs it)
    redactor = _redactor(args.key_file, headers, args.recordings) if args.recordings else None
    _show_secrets(contract, redactor)
    started = time.perf_counter()
    with Progress("mock: reading", quiet=args.quiet) as bar:
        index = load(contract, args.recordings, cache=args.index_cache,
                     on_progress=bar.update)
    for reason in index.broken:
        print(f"harness mock: skipped {reason}", file=sys.stderr)
    if args.recordings and not index.calls and not index.descriptions:
        index.close()
        raise RecordingError(f"no call of {contract.name} to answer in "
                             f"{', '.join(args.recordings)} ({summary.loaded_line(index, 0)})")
    seconds = time.perf_counter() - started
    note = index.note or ("--index-cache FILE keeps the index for the next start"
                          if seconds > SLOW_LOAD else None)
    if args.recordings:
        print(f"harness mock: {summary.loaded_line(index, seconds)}"
              + (f"; {note}" if note else ""), file=sys.stderr, flush=True)
    if args.stubs:
        print(f"harness mock: {len(stubs.written)} stub(s) from {', '.join(args.stubs)}",
              file=sys.stderr, flush=True)
    options = Options(args.fallback, args.sequence, args.latency, args.descriptions,
                      redactor, any(h.get("redacted") for h in headers), faults, args.seed)
    forwarder = _forwarder(contract, args) if forwarding else None
    journal = Journal(args.journal)
    mock = Mock(contract, index, options, stubs=stubs, journal=journal, forwarder=forwarder,
                on_unmatched=_say, on_error=_complain)

    def announce(url: str) -> None:
        key = forwarder.key_file if forwarder is not None else None
        unmatched = {"none": "refused", "reference": "answered by the reference"}.get(
            args.fallback, f"forwarded to {args.fallback}"
            + (f" and recorded in {args.record}" if args.record else "")
            + (f" (pseudonym key in {key}: never share it)" if key else ""))
        served = " and ".join(what for what, given in (("as recorded", args.recordings),
                                                      ("as stubbed", args.stubs)) if given)
        print(f"harness mock: {contract.name} {served or 'through the fallback'} on {url} "
              f"(namespace {contract.namespace}); unmatched calls {unmatched}"
              + (f"; faults: {', '.join(f.label for f in faults)}" if faults else "")
              + f"; admin API {url}/__harness/; Ctrl-C stops it", file=sys.stderr, flush=True)

    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C before the server listens to it
            serve(contract, args.host, args.port, app=create_mock_app(contract, mock),
                  announce=announce)
    finally:
        index.close()
        journal.close()
        if forwarder is not None:
            forwarder.close()
    for line in summary.console_lines(mock.stats):
        print(f"harness mock: {line}", flush=True)
    if journal.failed:
        _complain(f"cannot write --journal {args.journal}: its later calls are not in it")
    if args.json:
        settings = {"fallback": args.fallback, "sequence": args.sequence,
                    "latency": args.latency, "descriptions": args.descriptions,
                    "key_file": bool(args.key_file), "stubs": args.stubs,
                    "faults": [f.label for f in faults], "record": args.record}
        summary.write_json(args.json, summary.as_json(index, mock.stats, settings))
    unmatched = mock.stats.answered["unmatched"] + mock.stats.answered["reference"]
    return 1 if unmatched else 0


def _fallback(text: str) -> str:
    """none, reference, or a deployment's base URL."""
    if text in ("none", "reference"):
        return text
    if text.startswith(("http://", "https://")) and text[-3:] != "://":
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is none of none, reference, or a URL "
                                     "(http://host:port/path)")


#: The authentication options (add_auth_options) a mock without --fallback URL refuses.
_AUTH_FLAGS = ("user", "cert", "key", "wsse_user", "login_url", "basic", "digest", "ntlm",
               "negotiate")


def _forwarder(contract, args: argparse.Namespace):
    from harness.mock.forward import Forwarder
    from harness.traffic.login import log_in
    from harness.traffic.send import SendOptions

    # The --fallback deployment's credentials (docs: Authentication): asked now, before the
    # mock listens; the login, if any, done once.
    options = log_in(SendOptions(auth=auth_options(args)))
    if options.auth.cert is not None:
        options.verify()  # a certificate that cannot be read: its one line now
    return Forwarder(contract, args.fallback, record=args.record, key_file=args.key_file,
                     options=options)


def _say(line: str) -> None:
    print(f"unmatched: {line}", flush=True)


def _complain(line: str) -> None:
    print(f"harness mock: error: {line}", file=sys.stderr, flush=True)


def _headers(paths: list[str]) -> list[dict]:
    """The headers of the native recordings among ``paths`` (read before any indexing)."""
    from harness.traffic.recording import read_header

    return [h for h in (read_header(p) for p in paths if Path(p).is_file()) if h]


def _show_secrets(contract, redactor) -> None:
    """The console and the JSON show a personal value by its pseudonym: the recording's (its
    key), so a value reads as in the recording; without the key, one of this run's."""
    import secrets

    from harness.traffic.keys import KEY_BYTES
    from harness.traffic.redaction import ReportRedaction, use_report_redaction

    key = redactor.key if redactor is not None else secrets.token_bytes(KEY_BYTES)
    use_report_redaction(ReportRedaction(contract, key))


def _redactor(key_file: str | None, headers: list[dict], recordings: list[str] = ()):
    """The Redactor the recordings were redacted with, from ``key_file`` (else the key found
    where capture put it: ``harness.traffic.keys``) and the settings their headers name;
    UsageError when ``key_file`` fits none of them."""
    from harness.traffic.keys import recording_keys
    from harness.traffic.redaction import Redactor, key_id, load_or_create_key

    if not key_file:
        found = next((k.key for k in recording_keys(recordings).values() if k.key), None)
        if found is None:
            return None
        key = found
    else:
        if not Path(key_file).is_file():
            raise UsageError(f"key file {key_file} does not exist")
        key = load_or_create_key(key_file)
    settings = [h.get("redaction") or {} for h in headers]
    ids = sorted({str(s.get("key_id")) for s in settings if s.get("key_id")})
    fitting = [s for s in settings if s.get("key_id") == key_id(key)]
    if not fitting:
        raise UsageError(f"--key-file {key_file} is not the key of any recording given "
                         f"(its key id is {key_id(key)}; the recordings': "
                         f"{', '.join(ids) or 'none: they are not redacted'})")
    names = frozenset(n for s in fitting for n in s.get("names", ()))
    roots = frozenset(n for s in fitting for n in s.get("result_roots", ()))
    return Redactor(key, names, roots)
