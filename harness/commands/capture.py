"""``harness capture``: proxy live traffic to the service into a recording."""

from __future__ import annotations

import argparse

from harness.commands import add_command
from harness.commands.options import add_contract_options, contract_from, port


def register(sub) -> None:
    p = add_command(sub, "capture", "Record live traffic with the service through mitmproxy: "
                    "reverse proxy in front of a deployment, or a proxy a phone points at. "
                    "Every exchange is classified, redacted and appended to a recording as it "
                    "completes. Personal values become pseudonyms under a key capture keeps in "
                    "your key store ($XDG_DATA_HOME/harness/keys/, else "
                    "~/.local/share/harness/keys/; HARNESS_KEY_STORE names another), out of "
                    "the working tree: replay, scenarios, load and mock find it there by the "
                    "recording's key id. Share the recording file alone: it holds no key.",
                    "harness capture --upstream https://staging.example --out traffic.jsonl"
                    "   # then point the app at http://127.0.0.1:8080")
    p.add_argument("--upstream", metavar="URL",
                   help="the service's base URL (required in reverse mode; in regular mode, "
                   "traffic to other hosts, or other ports when URL names one, is foreign)")
    p.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="where the proxy listens (default 127.0.0.1:8080; port 0 picks one; "
                   "0.0.0.0:8080 to let a phone on the LAN connect)")
    p.add_argument("-o", "--out", required=True, metavar="PATH",
                   help="recording to append to (JSON Lines; created when missing)")
    p.add_argument("--mode", choices=("reverse", "regular"), default="reverse",
                   help="reverse: in front of --upstream (default); regular: an HTTP(S) proxy "
                   "(HTTPS through mitmproxy's CA: docs, 'Capture mobile traffic')")
    add_recording_options(p)
    p.add_argument("--keep-foreign", action="store_true",
                   help="also record traffic that is not for the service, marked foreign")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify the upstream's TLS certificate (staging self-signed)")
    p.add_argument("--cacert", metavar="FILE",
                   help="trust this CA (PEM) for the upstream's certificate, as the sending "
                   "commands' --cacert")
    p.add_argument("--cert", metavar="FILE",
                   help="client certificate the proxy presents to an upstream that asks for "
                   "one (mTLS): a PEM file holding the certificate and its unencrypted key, as "
                   "mitmproxy takes it (keep it 0600). A client's own NTLM, Negotiate, Basic or "
                   "WS-Security passes through as it is (docs: Authentication)")
    p.add_argument("--confdir", metavar="DIR",
                   help="mitmproxy's configuration directory: its CA (mitmproxy-ca-cert.pem, "
                   "the certificate a phone installs for HTTPS) is created there on first "
                   "run and reused (default ~/.mitmproxy)")
    p.add_argument("--web", action="store_true",
                   help="also show mitmproxy's web UI (mitmweb) on 127.0.0.1: browse, filter "
                   "and resend the flows while they are recorded as without it (the URL, "
                   "with its access token, is printed at start)")
    p.add_argument("--web-port", type=port(), default=8081, metavar="PORT",
                   help="the web UI's port with --web (default 8081; always on 127.0.0.1)")
    add_contract_options(p)
    p.set_defaults(run=run)


def add_recording_options(p, *, also: str = "") -> None:
    """How a proxy's recording is written (capture, shadow): --no-redact, --redact NAME,
    --key-file PATH, --max-body-mb N (``also``: what else a body over it means)."""
    p.add_argument("--no-redact", dest="redact", action="store_false",
                   help="record personal data as it is (the recording's header says so)")
    p.add_argument("--redact", dest="redact_names", action="append", default=[],
                   metavar="NAME", help="also redact this parameter, element or header "
                   "(repeatable)")
    p.add_argument("--key-file", metavar="PATH",
                   help="pseudonym key file (default: the recording's key in your key store, "
                   "KEY_STORE/<key id>.key, created 0600 and reused on append; a <out>.key "
                   "beside an older recording is still used; '-' for a random key of this run "
                   "only). Never share it with the recording.")
    p.add_argument("--max-body-mb", type=_body_mb, default=16, metavar="N",
                   help="a request or response body over N MB (by its Content-Length) is "
                   "streamed through as it comes, and recorded truncated: its first 64 KiB, "
                   "its size and SHA-256 in meta.truncated (default 16; at most 1024). "
                   f"The proxy's memory does not grow with a body's size{also}")


def _body_mb(text: str) -> int:
    from harness.capture.addon import MAX_BODY_MB

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_BODY_MB:
        raise argparse.ArgumentTypeError(f"{text} is out of range (1 to {MAX_BODY_MB})")
    return value


def _upstream_tls(args: argparse.Namespace) -> dict[str, object]:
    """mitmproxy's options for the upstream's TLS: --insecure, --cacert, --cert."""
    from pathlib import Path

    from harness.errors import UsageError

    for flag, path in (("--cacert", args.cacert), ("--cert", args.cert)):
        if path is not None and not Path(path).is_file():
            raise UsageError(f"{flag} {path}: no such file")
    if args.cert is not None and b"PRIVATE KEY-----" not in Path(args.cert).read_bytes():
        raise UsageError(f"--cert {args.cert}: no unencrypted private key in it (capture needs "
                         "the certificate and its key in one PEM file)")
    options: dict[str, object] = {"ssl_insecure": True} if args.insecure else {}
    if args.cacert:
        options["ssl_verify_upstream_trusted_ca"] = str(Path(args.cacert).resolve())
    if args.cert:
        options["client_certs"] = str(Path(args.cert).resolve())
    return options


def run(args: argparse.Namespace) -> int:
    from harness.capture.proxy import CaptureSettings, parse_listen, run_capture

    host, port = parse_listen(args.listen)
    settings = CaptureSettings(out=args.out, upstream=args.upstream, listen_host=host,
                               listen_port=port, mode=args.mode, redact=args.redact,
                               keep_foreign=args.keep_foreign, redact_names=args.redact_names,
                               key_file=args.key_file, confdir=args.confdir,
                               max_body_mb=args.max_body_mb,
                               mitm_options=_upstream_tls(args),
                               web_port=args.web_port if args.web else None)
    return run_capture(settings, contract=contract_from(args))
