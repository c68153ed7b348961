"""The cookie login: one call before the run (a forms login's POST, or a login operation's SOAP
call) whose cookies ride on every request after it.

``--login-url URL`` with ``--login-data DATA`` (a form, ``name=value&...``, or ``@FILE``: a
SOAP envelope, say; ``${NAME}`` in it is the environment variable NAME, percent-encoded in a
form and escaped in XML, so a password stays out of the command line) and ``--login-header
'Name: value'``. ``log_in`` sends it once, through
the run's own sending options (its TLS, its HTTP authentication), without following a redirect
(a forms login answers 302 with its cookie), and returns the Cookie header the run adds to every
request: a login that fails (HTTP 4xx/5xx) or sets no cookie stops the run before anything
else is sent (AuthenticationFailed: one line, exit 2).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlsplit
from xml.sax.saxutils import escape as xml_escape

from harness.errors import AuthenticationFailed, UsageError
from harness.traffic.auth import Secret

if TYPE_CHECKING:
    from harness.traffic.send import SendOptions

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The largest --login-data @FILE.
MAX_DATA = 1024 * 1024


@dataclass(frozen=True)
class Login:
    url: str
    #: The request body (None: a GET), with ${NAME} already expanded: a secret.
    data: Secret | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def method(self) -> str:
        return "POST" if self.data is not None else "GET"


def parse(url: str, data: str | None, headers: list[tuple[str, str]]) -> Login:
    """The Login the flags describe (UsageError for a bad URL, file or variable)."""
    from harness.traffic.send import base_url

    base_url(url)  # absolute http(s), one line otherwise
    body = None
    if data is not None:
        if data.startswith("@"):
            from harness.files import read_limited

            data = read_limited(Path(data[1:]), MAX_DATA, "--login-data").decode("utf-8")
        body = Secret(_expanded(data, xml=data.lstrip().startswith("<")))
    return Login(url, body, tuple(headers))


def _expanded(text: str, xml: bool) -> str:
    """``text`` with each ${NAME} replaced by the variable's value, encoded for the body: a
    password with '&' or '<' in it stays one value (percent-encoded in a form, escaped in
    XML)."""
    def var(match: re.Match[str]) -> str:
        if match[1] not in os.environ:
            raise UsageError(f"--login-data: ${{{match[1]}}} is not set in the environment")
        value = os.environ[match[1]]
        return xml_escape(value, {'"': "&quot;"}) if xml else quote_plus(value)
    return _VAR.sub(var, text)


def to_data(login: Login | None) -> dict[str, Any] | None:
    if login is None:
        return None
    return {"url": login.url, "data": login.data.reveal() if login.data else None,
            "headers": [list(h) for h in login.headers]}


def from_data(data: dict[str, Any] | None) -> Login | None:
    if not data:
        return None
    return Login(data["url"], Secret(data["data"]) if data["data"] is not None else None,
                 tuple((str(k), str(v)) for k, v in data["headers"]))


def log_in(options: SendOptions) -> SendOptions:
    """``options`` with the login's cookies as a Cookie header on every request (the login
    itself done now, once); ``options`` as they are without a login."""
    from harness.traffic.exchange import HttpRequest
    from harness.traffic.send import Sender

    login = options.auth.login
    if login is None:
        return options
    plain = replace(options, auth=replace(options.auth, login=None))
    body = login.data.reveal().encode() if login.data is not None else b""
    headers = [("Host", urlsplit(login.url).netloc), *login.headers]
    if body and not any(k.lower() == "content-type" for k, _ in headers):
        headers.append(("Content-Type", "text/xml; charset=utf-8" if body.lstrip().startswith(
            b"<") else "application/x-www-form-urlencoded"))
    if body:
        headers.append(("Content-Length", str(len(body))))
    with Sender(replace(plain, max_failures=1), connections=1) as sender:
        response = sender.send(HttpRequest(login.method, login.url, tuple(headers), body))
    cookies = [value.split(";", 1)[0].strip() for name, value in response.headers
               if name.lower() == "set-cookie"]
    cookies = [c for c in cookies if "=" in c and c.split("=", 1)[1]]
    said = f"login {login.method} {urlsplit(login.url).path or '/'} answered HTTP {response.status}"
    if response.status >= 400:
        raise AuthenticationFailed(f"{said}: the login failed; check --login-data")
    if not cookies:
        raise AuthenticationFailed(f"{said} and set no cookie: the login failed (wrong "
                                   "credentials?); check --login-data and --login-url")
    cookie = "; ".join(cookies)
    kept = [(k, v) for k, v in options.headers if k.lower() != "cookie"]
    given = [v for k, v in options.headers if k.lower() == "cookie"]
    return replace(plain, headers=(*kept, ("Cookie", "; ".join([*given, cookie]))))
