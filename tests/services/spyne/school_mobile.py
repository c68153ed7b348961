"""School Mobile on Python spyne 2.14, as a team migrating off ASMX would write it.

The eight operations of the spec on their seven ``.asmx`` paths, namespace http://tempuri.org/,
the ASMX service's parameter names and types. Each endpoint is wired the way spyne's docs show
(one ``Application`` per service, ``Soap11(validator='lxml')`` in and out, ``WsgiApplication``,
``WsgiMounter``), plus what the mobile app needs to keep working:

- SOAP 1.2 on the same path, told apart by ``Content-Type`` (spyne's ``Soap12``);
- ``/<Endpoint>.asmx/<Operation>`` over HTTP GET and POST (spyne's ``HttpRpc``);
- the WSDL at ``<Endpoint>.asmx?wsdl``, as spyne generates it.

Whatever spyne does differently from ASMX (fault codes, text/plain answers over GET/POST, its
WSDL, its validation) is left as spyne does it: that is what a migration meets.

    python school_mobile.py [--port N]   # 0 (default): a free port; prints the base URL
"""

from __future__ import annotations

import argparse
import logging
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import six_shim  # noqa: F401  (first: lets spyne import on Python 3.12+; beside this file)
from spyne import Application, Int, ServiceBase, Unicode, rpc
from spyne.protocol.http import HttpRpc
from spyne.protocol.soap import Soap11, Soap12
from spyne.server.wsgi import WsgiApplication
from spyne.util.wsgi_wrapper import WsgiMounter

TNS = "http://tempuri.org/"


class AuthCodeSending(ServiceBase):
    @rpc(Unicode, Unicode)
    def AuthCode(ctx, code, phone):
        pass


class CenterlogOut(ServiceBase):
    @rpc(Unicode, Unicode, Int)
    def LogoutFromSchool(ctx, PhoneNumber, UuId, id_row_central):
        pass


class GetStudentsAudit(ServiceBase):
    @rpc(Unicode, Unicode)
    def GetStudentsAudtiNote(ctx, SubjectID, Class_id):
        pass


class GetTeacherSubjects(ServiceBase):
    @rpc(Unicode, Unicode)
    def GetTeacherSubjectsByID(ctx, Tid, TClassid):
        pass


class GetTeacherGroups(ServiceBase):
    @rpc(Unicode)
    def GetTeacherGrpupsByID(ctx, Tid):
        pass


class PushNotificationMobile(ServiceBase):
    @rpc(Unicode, _returns=Unicode)
    def GetTokenDevice(ctx, id):
        return "token-for-" + id


class NotificationNotes(ServiceBase):
    @rpc(Unicode, Unicode, Unicode)
    def SendNotificationType(ctx, id, baseUrlSchool, TypeNotfication):
        pass

    @rpc(Unicode, Unicode, Unicode)
    def SendMarkNotes(ctx, id, id_class, baseUrlSchool):
        pass


SERVICES = [AuthCodeSending, CenterlogOut, GetStudentsAudit, GetTeacherSubjects,
            GetTeacherGroups, PushNotificationMobile, NotificationNotes]


class Endpoint:
    """One ``.asmx`` path: SOAP 1.1 (and the WSDL) and SOAP 1.2 on the path itself, told apart
    by Content-Type as ASMX does; HTTP GET/POST on ``<path>/<Operation>``."""

    def __init__(self, service: type[ServiceBase]) -> None:
        def app(in_protocol, out_protocol):
            return WsgiApplication(Application([service], tns=TNS, name=service.__name__,
                                               in_protocol=in_protocol,
                                               out_protocol=out_protocol))

        self.soap11 = app(Soap11(validator="lxml"), Soap11())
        self.soap12 = app(Soap12(validator="lxml"), Soap12())
        self.http = app(HttpRpc(validator="soft"), HttpRpc())

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO", "").strip("/"):
            return self.http(environ, start_response)
        if environ.get("CONTENT_TYPE", "").startswith("application/soap+xml"):
            return self.soap12(environ, start_response)
        return self.soap11(environ, start_response)


def application() -> WsgiMounter:
    return WsgiMounter({f"{service.__name__}.asmx": Endpoint(service) for service in SERVICES})


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args().port
    logging.basicConfig(level=logging.WARNING)
    server = make_server("127.0.0.1", port, application(), server_class=ThreadingWSGIServer,
                         handler_class=QuietHandler)
    print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
