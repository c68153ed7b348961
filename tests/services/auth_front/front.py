"""A protected front of a deployment, as IIS puts one before an ASMX service: every request must
authenticate before it is passed on (Host kept, so the service's WSDL names the front).

    python tests/services/auth_front/front.py --scheme ntlm --upstream http://127.0.0.1:33325

Schemes: ``basic``, ``digest`` (RFC 7616, MD5, qop=auth, checked here), ``ntlm`` (offers
NTLM; pyspnego's acceptor checks the handshake against NTLM_USER_FILE, which matches by domain
and user), ``negotiate`` (offers Negotiate and NTLM, as IIS does), ``cookie`` (a forms login:
POST /login with user and password sets .ASPXAUTH; anything else without it is redirected to
the login page, as ASP.NET forms authentication does) and ``none``. NTLM and Negotiate
authenticate the connection, as IIS does: the requests after the handshake on that connection
pass without one, a new connection must authenticate again. With ``--tls CERT KEY`` it speaks
TLS, and with ``--client-ca CA`` it requires a client certificate signed by CA (mTLS).

The user is FRONT_USER / FRONT_PASSWORD (environment). Prints ``listening on URL`` when ready.
Counts what it saw on GET /_front/stats (JSON): connections, handshakes, refusals.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailer", "transfer-encoding", "upgrade"}
REALM = "School"
COOKIE = ".ASPXAUTH"
STATS = {"connections": 0, "handshakes": 0, "refused": 0, "passed": 0}
LOCK = threading.Lock()


def count(name: str) -> None:
    with LOCK:
        STATS[name] += 1


class Front(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scheme = "none"
    upstream = ""
    user = password = ""
    nonces: set[str] = set()
    sessions: set[str] = set()

    def setup(self) -> None:
        super().setup()
        count("connections")
        self.spnego = None  # this connection's handshake under way
        self.authenticated = False  # this connection's NTLM/Negotiate identity
        self.upstream_conn = None

    def log_message(self, format: str, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.handle_one()

    do_POST = do_PUT = do_HEAD = do_DELETE = do_OPTIONS = do_PATCH = do_GET

    def handle_one(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_front/stats":
            return self.reply(200, [("Content-Type", "application/json")],
                              json.dumps(STATS).encode())
        check = getattr(self, f"check_{self.scheme}")
        if check(body):
            count("passed")
            self.forward(body)

    # ------------------------------------------------------------------ the schemes

    def check_none(self, body: bytes) -> bool:
        return True

    def check_basic(self, body: bytes) -> bool:
        given = self.headers.get("Authorization", "")
        expected = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        if given == f"Basic {expected}":
            return True
        return self.challenge([f'Basic realm="{REALM}"'], bool(given))

    def check_digest(self, body: bytes) -> bool:
        given = self.headers.get("Authorization", "")
        if given.startswith("Digest ") and self.digest_ok(given[7:]):
            return True
        nonce = secrets.token_hex(16)
        self.nonces.add(nonce)
        return self.challenge([f'Digest realm="{REALM}", qop="auth", algorithm=MD5, '
                               f'nonce="{nonce}", opaque="{secrets.token_hex(8)}"'], bool(given))

    def digest_ok(self, text: str) -> bool:
        p = {k: a or b for k, a, b in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', text)}
        if p.get("username") != self.user or p.get("nonce") not in self.nonces:
            return False
        md5 = lambda s: hashlib.md5(s.encode()).hexdigest()  # noqa: E731
        ha1 = md5(f"{self.user}:{REALM}:{self.password}")
        ha2 = md5(f"{self.command}:{p.get('uri')}")
        want = md5(f"{ha1}:{p['nonce']}:{p.get('nc')}:{p.get('cnonce')}:{p.get('qop')}:{ha2}")
        return p.get("uri") == self.path and p.get("response") == want

    def check_ntlm(self, body: bytes) -> bool:
        return self.spnego_step(["NTLM"])

    def check_negotiate(self, body: bytes) -> bool:
        return self.spnego_step(["Negotiate", "NTLM"])

    def spnego_step(self, offered: list[str]) -> bool:
        import spnego

        if self.authenticated:
            return True
        given = self.headers.get("Authorization", "")
        name, _, token = given.partition(" ")
        if name not in offered or not token:
            self.spnego = None
            return self.challenge(offered, False)
        try:
            if self.spnego is None:
                count("handshakes")
                self.spnego = spnego.server(protocol="ntlm" if name == "NTLM" else "negotiate")
            out = self.spnego.step(base64.b64decode(token))
        except Exception:  # a wrong password: pyspnego refuses the NTLM response
            self.spnego = None
            return self.challenge(offered, True)
        if self.spnego.complete:
            self.authenticated = True
            return True
        return self.reply(401, [("WWW-Authenticate",
                                 f"{name} {base64.b64encode(out or b'').decode()}")],
                          b"401 - handshake under way")

    def check_cookie(self, body: bytes) -> bool:
        if self.path.startswith("/login"):
            form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
            if self.command == "POST" and form.get("user") == self.user \
                    and form.get("password") == self.password:
                ticket = secrets.token_hex(16)
                self.sessions.add(ticket)
                self.reply(302, [("Location", "/"),
                                 ("Set-Cookie", f"{COOKIE}={ticket}; path=/; HttpOnly")], b"")
            else:  # the form again, no cookie: ASP.NET's answer to wrong credentials
                count("refused")
                self.reply(200, [("Content-Type", "text/html")],
                           b"<html><form method=post>Login failed</form></html>")
            return False
        cookies = dict(c.strip().partition("=")[::2]
                       for c in self.headers.get("Cookie", "").split(";") if "=" in c)
        if cookies.get(COOKIE) in self.sessions:
            return True
        count("refused")
        return self.reply(302, [("Location", f"/login?ReturnUrl={self.path}")], b"")

    def challenge(self, schemes: list[str], refused: bool) -> bool:
        if refused:
            count("refused")
        self.reply(401, [("WWW-Authenticate", s) for s in schemes] +
                   [("Content-Type", "text/html")], b"<html>401 - Unauthorized</html>")
        return False

    # ---------------------------------------------------------------------- passing on

    def forward(self, body: bytes) -> None:
        target = urlsplit(self.upstream)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP | {"authorization", "cookie"}}
        for _ in range(2):  # a kept-alive upstream connection may have closed meanwhile
            if self.upstream_conn is None:
                self.upstream_conn = http.client.HTTPConnection(target.hostname, target.port,
                                                                timeout=60)
            try:
                self.upstream_conn.request(self.command, self.path, body=body or None,
                                           headers=headers)
                answer = self.upstream_conn.getresponse()
                data = answer.read()
                break
            except (OSError, http.client.HTTPException):
                self.upstream_conn.close()
                self.upstream_conn = None
        else:
            return self.reply(502, [], b"upstream failed")
        self.reply(answer.status, [(k, v) for k, v in answer.getheaders()
                                   if k.lower() not in HOP_BY_HOP | {"content-length"}],
                   data, answer.reason)

    def reply(self, status: int, headers: list[tuple[str, str]], body: bytes,
              reason: str | None = None) -> bool:
        self.send_response(status, reason)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return False


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scheme", default="none",
                   choices=("none", "basic", "digest", "ntlm", "negotiate", "cookie"))
    p.add_argument("--upstream", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--client-ca", metavar="CA")
    args = p.parse_args(argv)
    Front.scheme, Front.upstream = args.scheme, args.upstream.rstrip("/")
    Front.user, Front.password = os.environ.get("FRONT_USER", ""), os.environ.get(
        "FRONT_PASSWORD", "")
    ThreadingHTTPServer.request_queue_size = 256  # a load opens many connections at once
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Front)
    server.daemon_threads = True
    scheme = "http"
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        if args.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.client_ca)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    print(f"listening on {scheme}://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
