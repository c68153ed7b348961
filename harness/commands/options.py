"""The option group every command that sends shares, with the same names and meaning
(certify, replay, diff, and the commands still to come: call ``add_send_options(parser)`` in
``register`` and ``send_options(args)`` / ``selection(args, contract)`` in ``run``).

Sending: ``--config FILE``, ``--timeout S`` (total per request), ``--max-response-mb N``,
``--insecure``, ``--cacert FILE``, ``-H/--header 'Name: value'`` (repeatable). Authentication
(``add_auth_options``, as curl spells it): ``-u/--user USER[:PASSWORD]`` with ``--basic``,
``--digest``, ``--ntlm`` or ``--negotiate``; ``--cert FILE[:PASSWORD]``, ``--cert-type``,
``--key FILE``, ``--pass``; ``--wsse-user USER[:PASSWORD]``, ``--wsse-password-type``;
``--login-url URL``, ``--login-data DATA``, ``--login-header``. Selection:
``--operation NAME`` and ``--binding LABEL`` (repeatable). Every one of them can also come from
the config file (harness.config); a flag overrides it.

The contract options (``add_contract_options``: --contract, --wsdl, --namespace) are shared
too; ``contract_for_target`` reads the namespace from the target's ?WSDL when none is given.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from harness.contract.model import DEFAULT_NAMESPACE, Contract
from harness.contract.selection import Selection
from harness.errors import UsageError
from harness.traffic import defaults

if TYPE_CHECKING:
    from harness.traffic.send import SendOptions


#: The largest whole number a count option takes (a C int's range: larger ones overflowed).
MAX_COUNT = 1_000_000_000


def count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (and at most MAX_COUNT)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most {MAX_COUNT:,})")
    return value


#: The longest deadline or wait any option takes, in seconds (a day): past it a number is a
#: typo, and past ~1e9 the OS's timers overflow (``--timeout 1e308`` was an OverflowError).
MAX_SECONDS = 86_400.0
#: The most requests in flight (or jobs) any option takes.
MAX_CONCURRENCY = 10_000
#: The most worker processes (lint --workers, load --expect-workers).
MAX_WORKERS = 256
#: The slowest ``--rate`` (requests per second): one request every ~17 minutes.
MIN_RATE = 0.001
#: The fastest ``--rate``.
MAX_RATE = 1_000_000.0


def positive(kind: Callable[[str], Any], most: float | None = None) -> Callable[[str], Any]:
    """An argparse type: a finite number of ``kind`` above 0 (and at most ``most``)."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not a finite number")
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be above 0")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{text} is too large (at most {most:g})")
        return value
    return parse


def seconds(text: str) -> float:
    """An argparse type: a duration above 0, at most MAX_SECONDS."""
    return positive(float, MAX_SECONDS)(text)


def rate(text: str) -> float:
    """An argparse type: requests per second, MIN_RATE to MAX_RATE."""
    value = positive(float, MAX_RATE)(text)
    if value < MIN_RATE:
        raise argparse.ArgumentTypeError(
            f"{text} is too slow (at least {MIN_RATE:g} requests per second)")
    return value


def rate_or_zero(text: str) -> float:
    """An argparse type: ``rate``, or 0 for no limit."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass
    return rate(text)


def megabytes(text: str) -> float:
    """An argparse type: a size in MB above 0, at most 1 TB."""
    return positive(float, 1024.0 * 1024.0)(text)


def port(lowest: int = 1) -> Callable[[str], int]:
    """An argparse type: a port number from ``lowest`` (0: the OS picks one) to 65535, the
    same on every command that listens or connects (an out-of-range port was an
    OverflowError traceback from bind())."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a port") from None
        if not lowest <= value <= 65535:
            raise argparse.ArgumentTypeError(f"{text} is not a port ({lowest} to 65535)")
        return value
    return parse


def header(text: str) -> tuple[str, str]:
    """An argparse type: ``'Name: value'`` as (name, value)."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or any(c in name for c in " \t\r\n") \
            or any(c in value for c in "\r\n"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a header 'Name: value'")
    return name.strip(), value.strip()


def add_send_options(p: argparse.ArgumentParser, *,
                     timeout: float = defaults.DEFAULT_TIMEOUT, select: bool = True) -> None:
    """The sending and selection options (see the module docstring); ``timeout`` is the
    command's default deadline (probe's is its ROB-TIME bound); ``select=False`` leaves the
    selection out (shadow chooses what it mirrors with options of its own)."""
    g = p.add_argument_group("sending (the same on every command that sends; docs: "
                             "'Certify your staging in CI')")
    g.add_argument("--config", metavar="FILE",
                   help="settings file (default ./harness.toml, else [tool.harness] in "
                        "./pyproject.toml); flags override it")
    g.add_argument("--env", metavar="NAME",
                   help="the config file's named environment [env.NAME] (e.g. staging, "
                        "preprod): its target, headers, authentication, TLS, values and "
                        "timeouts over the file's top level; reports name it")
    g.add_argument("--timeout", type=seconds, default=timeout,
                   metavar="S", help="total seconds per request: connect, headers and the whole "
                   f"body (default {timeout:g}); after "
                   f"{defaults.DEFAULT_MAX_FAILURES} requests in a row without an answer the run "
                   "stops (exit 2)")
    g.add_argument("--max-response-mb", type=megabytes, metavar="N",
                   default=defaults.DEFAULT_MAX_RESPONSE_MB,
                   help="a response body above N MB (counted decoded) is a finding "
                        f"{defaults.RESPONSE_SIZE_RULE} "
                        f"(default {defaults.DEFAULT_MAX_RESPONSE_MB:g})")
    g.add_argument("--insecure", action="store_true",
                   help="do not verify the target's TLS certificate")
    g.add_argument("--cacert", metavar="FILE",
                   help="trust this CA (PEM) instead of the system trust store")
    g.add_argument("-H", "--header", action="append", type=header, default=[],
                   metavar="'NAME: VALUE'", help="add this header to every request, e.g. "
                   "'Authorization: Bearer ...' (repeatable; credentials never reach reports)")
    add_auth_options(p)
    if not select:
        return
    s = p.add_argument_group("selection")
    s.add_argument("--operation", action="append", default=[], metavar="NAME",
                   help="send only this operation (repeatable; default all)")
    s.add_argument("--binding", action="append", default=[], metavar="LABEL",
                   help="send only over this binding: soap11, soap12, get, post "
                        "(repeatable; default all)")


def add_key_option(p: argparse.ArgumentParser) -> None:
    """``--key-file``: a recording's pseudonym key, for commands that compare recorded values."""
    p.add_argument("--key-file", metavar="FILE",
                   help="the recordings' pseudonym key file, when it is not where capture put "
                        "it (default: found by the recording's key id in your key store, or "
                        "beside the recording): redacted values are compared by pseudonym "
                        "under it; without one they are not compared, and said")


def recording_keys(args: argparse.Namespace, command: str,
                   stream: IO[str] | None = None) -> dict[str, bytes | None]:
    """Each recording's pseudonym key by its path (``--key-file`` or found without a flag);
    one line on ``stream`` (default sys.stderr, as it is at the call) naming the redacted
    recordings whose key was not found."""
    from harness.traffic.keys import missing_line
    from harness.traffic.keys import recording_keys as found

    keys = found(args.recordings, args.key_file)
    if line := missing_line(keys.values(), command):
        print(line, file=stream or sys.stderr)
    return {path: k.key for path, k in keys.items()}


def add_auth_options(p: argparse.ArgumentParser) -> None:
    """The authentication options of every command that sends (docs: 'Authentication')."""
    a = p.add_argument_group(
        "authentication (as curl spells it; passwords from the environment or a prompt, never "
        "shown: docs 'Authentication')")
    a.add_argument("-u", "--user", metavar="USER[:PASSWORD]",
                   help="HTTP authentication as USER (DOMAIN\\USER for NTLM); without "
                   f":PASSWORD the password is ${PASSWORD_ENV}, else asked on the terminal; "
                   "Basic unless --digest, --ntlm or --negotiate")
    for scheme, what in (("basic", "HTTP Basic (the default with --user)"),
                         ("digest", "HTTP Digest"),
                         ("ntlm", "NTLM (Windows authentication; authenticates a connection: "
                                  "each handshake and its requests share one)"),
                         ("negotiate", "Negotiate: Kerberos where a ticket exists (kinit, "
                                       "--user :), else NTLM")):
        a.add_argument(f"--{scheme}", action="store_true", help=f"use {what}")
    a.add_argument("--cert", metavar="FILE[:PASSWORD]",
                   help="client certificate for TLS (mTLS): PEM (with its key, or --key), or "
                   "PKCS#12 (.p12/.pfx); the password of an encrypted key or PKCS#12 after "
                   f"':', or --pass, or ${CERT_PASSWORD_ENV}")
    a.add_argument("--cert-type", choices=("PEM", "P12"), type=str.upper,
                   help="the --cert file's format (default: P12 for .p12/.pfx, else PEM)")
    a.add_argument("--key", metavar="FILE", help="the client certificate's private key (PEM)")
    a.add_argument("--pass", dest="cert_pass", metavar="PHRASE",
                   help="password of the --key or PKCS#12 file (prefer "
                   f"${CERT_PASSWORD_ENV}: a command line is visible to other users)")
    a.add_argument("--wsse-user", metavar="USER[:PASSWORD]",
                   help="add a WS-Security UsernameToken and Timestamp to every SOAP envelope, "
                   f"as WSE 3.0 clients do; without :PASSWORD the password is ${WSSE_ENV}, "
                   "else asked on the terminal")
    a.add_argument("--wsse-password-type", choices=("digest", "text"), default="digest",
                   help="PasswordDigest (default: SHA-1 of nonce, time and password) or "
                   "PasswordText (the password itself: only over TLS)")
    a.add_argument("--login-url", metavar="URL",
                   help="a cookie login before the run: this URL is called once (POST with "
                   "--login-data, else GET) and the cookies it sets ride on every request")
    a.add_argument("--login-data", metavar="DATA",
                   help="the login's body: a form ('user=alice&password=${PW}': ${NAME} is "
                   "the environment variable NAME) or @FILE (e.g. a login operation's SOAP "
                   "envelope)")
    a.add_argument("--login-header", action="append", type=header, default=[],
                   metavar="'NAME: VALUE'", help="a header of the login call, e.g. "
                   "'SOAPAction: \"http://tempuri.org/Login\"' (repeatable)")


#: Environment variables passwords are read from (harness.traffic.auth, .wsse).
PASSWORD_ENV = "HARNESS_PASSWORD"
CERT_PASSWORD_ENV = "HARNESS_CERT_PASSWORD"
WSSE_ENV = "HARNESS_WSSE_PASSWORD"


def send_options(args: argparse.Namespace) -> SendOptions:
    """The SendOptions the flags and the config file give, with the cookie login done (the
    only thing it sends) and every password resolved (asked now, before anything is sent)."""
    from harness.traffic.login import log_in
    from harness.traffic.redaction import add_credential_headers, add_report_secrets, passwords
    from harness.traffic.send import SendOptions  # httpx only for commands that send

    add_credential_headers(name for name, _ in args.header)  # never shown in clear
    options = SendOptions(timeout=args.timeout, max_response_mb=args.max_response_mb,
                          insecure=args.insecure, cacert=args.cacert, headers=tuple(args.header),
                          auth=auth_options(args), environment=getattr(args, "env", None))
    add_report_secrets([*(value for _, value in args.header), *passwords(options.auth)])
    if options.auth.cert is not None:
        options.verify()  # a certificate that cannot be read: its one line now
    if getattr(args, "dry_run", False):  # nothing is sent, not even the login
        return options
    return log_in(options)


def auth_options(args: argparse.Namespace) -> Any:
    """harness.traffic.auth.AuthOptions of the authentication flags (UsageError, one line,
    for a combination that does not hold)."""
    from harness.traffic.auth import AuthOptions
    from harness.traffic.login import parse as parse_login
    from harness.traffic.wsse import UsernameToken

    chosen = [s for s in ("basic", "digest", "ntlm", "negotiate") if getattr(args, s, False)]
    if len(chosen) > 1:
        raise UsageError(f"give one of --{', --'.join(chosen)}")
    user = password = None
    if args.user is not None:
        user, password = credentials(args.user, PASSWORD_ENV, "--user")
    elif chosen:
        raise UsageError(f"--{chosen[0]} needs --user USER[:PASSWORD]")
    scheme = (chosen[0] if chosen else "basic") if args.user is not None else None
    if scheme == "negotiate" and not args.user.strip(":"):
        user = password = None  # --user : - the logged-in identity (a Kerberos ticket)
    elif scheme is not None and not user:
        raise UsageError("--user needs a user name (USER[:PASSWORD])")
    cert, cert_password = _cert(args)
    token = None
    if args.wsse_user is not None:
        wsse_user, wsse_password = credentials(args.wsse_user, WSSE_ENV, "--wsse-user")
        token = UsernameToken(wsse_user or "", wsse_password, args.wsse_password_type)
    if (args.login_data is not None or args.login_header) and not args.login_url:
        raise UsageError("--login-data and --login-header need --login-url URL")
    login = (parse_login(args.login_url, args.login_data, args.login_header)
             if args.login_url else None)
    cert_type = args.cert_type or ("P12" if cert and cert.lower().endswith((".p12", ".pfx"))
                                   else "PEM")
    return AuthOptions(scheme=scheme, user=user, password=password, cert=cert, key=args.key,
                       cert_type=cert_type, cert_password=cert_password, wsse=token,
                       login=login)


def credentials(text: str, env: str, flag: str, ask: Callable[[str], str] | None = None
                ) -> tuple[str, Any]:
    """(user, Secret password) of ``USER[:PASSWORD]``: the password after the first ':',
    else the environment variable ``env``, else asked on the terminal (not echoed); a
    UsageError without a terminal to ask on."""
    from harness.traffic.auth import Secret

    user, colon, password = text.partition(":")
    if colon:
        return user, Secret(password)
    if env in os.environ:
        return user, Secret(os.environ[env])
    if ask is None and not sys.stdin.isatty():
        raise UsageError(f"{flag} {user}: no password: give {flag} USER:PASSWORD, set {env}, "
                         "or run on a terminal to be asked")
    import getpass

    prompt = f"password for {flag} {user}: "
    return user, Secret((ask or (lambda p: getpass.getpass(p, stream=sys.stderr)))(prompt))


def _cert(args: argparse.Namespace) -> tuple[str | None, Any]:
    """--cert FILE[:PASSWORD] (curl's spelling: a path that exists as given keeps its ':'),
    and the password: after ':', --pass, or $HARNESS_CERT_PASSWORD."""
    from harness.traffic.auth import Secret

    if args.cert is None:
        if args.key or args.cert_pass:
            raise UsageError("--key and --pass need --cert FILE")
        return None, None
    cert, password = args.cert, args.cert_pass
    if not Path(cert).is_file() and ":" in cert:
        cert, _, password = cert.rpartition(":")
    if password is None:
        password = os.environ.get(CERT_PASSWORD_ENV)
    return cert, Secret(password) if password is not None else None


#: How a diff or shadow role names an environment of the config file: ``--candidate env:NAME``.
ENV_PREFIX = "env:"


def role_target(args: argparse.Namespace, flag: str) -> tuple[str | None, SendOptions | None]:
    """The URL of the role ``--FLAG`` and, when it names an environment (``env:NAME``), the
    settings it is sent with: those ``--env NAME`` gives (the environment's credentials,
    headers, TLS and timeouts, then the flags); else (URL, None): the run's own settings."""
    value = getattr(args, flag)
    if not value or not value.startswith(ENV_PREFIX):
        return value, None
    from harness import config

    name = value[len(ENV_PREFIX):]
    settings, source = config.load(args.config)
    target = config.environment_table(settings, name, source).get("target")
    if not isinstance(target, str) or not target:
        raise UsageError(f"--{flag} {value}: [env.{name}] of {source} has no target")
    if not hasattr(args, "with_environment"):
        raise UsageError(f"--{flag} {value}: environments are read by the harness command")
    return config.expanded(target, f"{source} [env.{name}]"), send_options(
        args.with_environment(name))


def selection(args: argparse.Namespace, contract: Contract) -> Selection:
    """--operation/--binding checked against ``contract`` (a command without them, such as
    shadow, selects everything); UsageError when together they select no operation x binding
    the contract offers (a run of nothing is no pass)."""
    from harness.contract.bindings import Binding

    chosen = Selection.parse(contract, getattr(args, "operation", ()),
                             getattr(args, "binding", ()))
    if chosen and not chosen.pairs(contract):
        raise UsageError(f"{_flags(args)} select nothing: "
                         + "; ".join(f"{op.name} is offered over "
                                     + ", ".join(Binding(b).label
                                                 for b in contract.bindings_of(op))
                                     for op in contract.operations
                                     if chosen.allows(op.name, None)))
    return chosen


def _flags(args: argparse.Namespace) -> str:
    return " ".join([*(f"--operation {o}" for o in args.operation),
                     *(f"--binding {b}" for b in args.binding)])


def contract_for_target(args: argparse.Namespace, url: str | None, options: SendOptions,
                        stream: IO[str] | None = None, command: str = "harness") -> Contract:
    """``contract_from(args)``; without --namespace/--contract/--wsdl, School Mobile under
    the namespace of ``url``'s ?WSDL (said in one line): the ?WSDL of the first selected
    operation's endpoint, as ``check_service`` got it (asked here only when it did not run)."""
    if args.namespace is None and not args.contract and not args.wsdl and url:
        from harness.traffic.send import base_url

        endpoint, answer = _service_checks(args).get(base_url(url), (None, None))
        args.namespace = resolve_namespace(None, url, options, stream, command,
                                           endpoint=endpoint or _checked_endpoint(args),
                                           answer=answer, asked=endpoint is not None)
    return contract_from(args, options)


def resolve_namespace(given: str | None, url: str | None, options: SendOptions,
                      stream: IO[str] | None = None, command: str = "harness", *,
                      endpoint: str | None = None, answer: Any = None,
                      asked: bool = False) -> str:
    """``given``, else the targetNamespace of the ?WSDL of ``url``'s ``endpoint`` (said in one
    line on ``stream``, default sys.stderr as it is at the call: a default bound at import
    would keep a test's closed capture; ``answer`` when it was ``asked`` already), else the
    default namespace (said too)."""
    stream = stream or sys.stderr
    if given:
        return given
    if not url:
        return DEFAULT_NAMESPACE
    from harness.traffic import send

    if asked and endpoint is not None:
        found, reason = send.namespace_in(answer, endpoint)
    else:
        send.check_reachable(url, options=options)  # a down target: its one line, nothing else
        found, reason = send.target_namespace(url, options, endpoint)
    if found:
        print(f"{command}: namespace {found} (from the target's ?WSDL; --namespace overrides)",
              file=stream)
        return found
    print(f"{command}: namespace {DEFAULT_NAMESPACE} (default: {reason}; --namespace sets it)",
          file=stream)
    return DEFAULT_NAMESPACE


def check_service(args: argparse.Namespace, url: str | None, options: SendOptions) -> None:
    """Before anything is said or judged: TargetUnreachable when ``url`` is down, and
    NotTheService when it answers like no service (a wrong base URL: a setup error, exit 2 and
    one line, not the product's failures). No operation is invoked: the ?WSDL of the first
    selected operation's endpoint, then a call of an operation no service has over each
    selected binding, until one is answered as a service answers
    (harness.judge.sending.check_service); the ?WSDL's answer is kept for the namespace."""
    if not url:
        return
    from harness.errors import NotTheService
    from harness.judge import sending
    from harness.traffic import send

    send.check_reachable(url, options=options)
    contract = contract_from(args, options)
    found = sending.check_service(url, contract, selection(args, contract), options)
    if found.wrong is not None:
        raise NotTheService(found.wrong)
    _service_checks(args)[send.base_url(url)] = (found.endpoint, found.wsdl)


def _service_checks(args: argparse.Namespace) -> dict[str, tuple[str, Any]]:
    """Per base URL checked: (the endpoint whose ?WSDL was asked, its answer or None)."""
    checks = getattr(args, "_service_checks", None)
    if checks is None:
        checks = {}
        args._service_checks = checks
    return checks


def _checked_endpoint(args: argparse.Namespace) -> str:
    """The endpoint whose ?WSDL names the namespace: the first selected operation's."""
    from harness.judge.sending import checked_operation

    contract = contract_from(args)
    return checked_operation(contract, selection(args, contract)).endpoint


def check_outputs(*paths: str | Path | None) -> None:
    """UsageError now, before anything is sent, for an output file that cannot be written."""
    for path in paths:
        if not path:
            continue
        target = Path(path)
        if target.is_dir():
            raise UsageError(f"{target} is a directory, not a file to write")
        folder = target.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK) or (
                target.exists() and not os.access(target, os.W_OK)):
            raise UsageError(f"cannot write {target}: {folder} is not writable")


def require(args: argparse.Namespace, *names: str) -> None:
    """Options argparse cannot require (they may come from the config file)."""
    missing = [f"--{n.replace('_', '-')}" for n in names if not getattr(args, n, None)]
    if missing:
        raise UsageError(f"{', '.join(missing)} required (as a flag or in the config file)")


def add_listen_options(p: argparse.ArgumentParser) -> None:
    """--host and --port of the commands that serve (serve, mock)."""
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; loopback unless you say so)")
    p.add_argument("--port", type=port(0), default=8000,
                   help="port (default 8000; 0 picks one)")


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
                       help="service namespace (default: the contract's; for School Mobile "
                            "with a target, its ?WSDL targetNamespace, else http://tempuri.org/)")


def contract_from(args: argparse.Namespace, options: SendOptions | None = None) -> Contract:
    """The contract the options name (a --wsdl URL fetched with ``options``: the run's TLS
    and authentication)."""
    from harness.contract.model import load, school_mobile

    if args.contract and args.wsdl:
        raise UsageError("give --contract FILE or --wsdl URL, not both")
    if args.namespace is not None and not args.namespace.strip():
        raise UsageError("--namespace is empty")
    if args.contract:
        contract = load(args.contract)
    elif args.wsdl:
        from harness.traffic.wsdls import import_wsdls

        contract = import_wsdls(args.wsdl, options=options)
    else:
        contract = school_mobile()
    return contract.with_namespace(args.namespace)
