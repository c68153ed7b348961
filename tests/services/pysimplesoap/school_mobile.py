"""School Mobile on Python PySimpleSOAP 1.16, as a team migrating off ASMX would write it.

The eight operations of the spec on their seven ``.asmx`` paths, namespace http://tempuri.org/,
the ASMX service's parameter names and types. Each endpoint is wired the way PySimpleSOAP's
docs show: one ``SoapDispatcher`` per service (its name, location, ``action`` prefix and
namespace), each operation registered with ``register_function(name, fn, returns=..., args=...)``,
served by PySimpleSOAP's own ``SOAPHandler`` on ``http.server`` (its WSGI handler cannot run on
Python 3: it matches a str pattern on the body's bytes). What the team adds so the mobile app
keeps working: the seven services on one port, the handler picking the dispatcher by the
``.asmx`` path, and ``<Endpoint>.asmx?WSDL`` answered with the WSDL PySimpleSOAP serves at "/".

SOAP only, as the library is: no HTTP GET/POST bindings. Whatever PySimpleSOAP does
differently from ASMX (``text/xml`` without charset for both SOAP versions, faults included;
fault codes like ``Client.KeyError``; SOAP 1.2 envelopes answered in kind; the SOAPAction
ignored; a request without a charset not decoded at all) is left as it does it: that is what a
migration meets.

    python school_mobile.py [--port N]   # 0 (default): a free port; prints the base URL
"""

from __future__ import annotations

import argparse
import logging
from http.server import ThreadingHTTPServer

from pysimplesoap.server import SoapDispatcher, SOAPHandler

TNS = "http://tempuri.org/"


def nothing(**_: object) -> None:
    """The operations without a result: the mobile app only needs the call to succeed."""


def get_token_device(id: str | None = None) -> str:
    return "token-for-" + (id or "")


#: endpoint -> [(operation, function, returns, args)], as the ASMX service declares them.
SERVICES = {
    "AuthCodeSending": [("AuthCode", nothing, {}, {"code": str, "phone": str})],
    "CenterlogOut": [("LogoutFromSchool", nothing, {},
                      {"PhoneNumber": str, "UuId": str, "id_row_central": int})],
    "GetStudentsAudit": [("GetStudentsAudtiNote", nothing, {},
                          {"SubjectID": str, "Class_id": str})],
    "GetTeacherSubjects": [("GetTeacherSubjectsByID", nothing, {},
                            {"Tid": str, "TClassid": str})],
    "GetTeacherGroups": [("GetTeacherGrpupsByID", nothing, {}, {"Tid": str})],
    "PushNotificationMobile": [("GetTokenDevice", get_token_device,
                                {"GetTokenDeviceResult": str}, {"id": str})],
    "NotificationNotes": [
        ("SendNotificationType", nothing, {},
         {"id": str, "baseUrlSchool": str, "TypeNotfication": str}),
        ("SendMarkNotes", nothing, {}, {"id": str, "id_class": str, "baseUrlSchool": str}),
    ],
}


def dispatcher(name: str, base: str) -> SoapDispatcher:
    soap = SoapDispatcher(name, location=f"{base}/{name}.asmx", action=TNS, namespace=TNS,
                          prefix=False, documentation=f"School Mobile {name}")
    for operation, function, returns, args in SERVICES[name]:
        soap.register_function(operation, function, returns=returns, args=args)
    return soap


class Endpoint:
    """What PySimpleSOAP's handler reads from its server: the dispatcher (one per path here)."""

    def __init__(self, soap: SoapDispatcher) -> None:
        self.dispatcher = soap


class SchoolMobileHandler(SOAPHandler):
    """PySimpleSOAP's handler, the dispatcher picked by the ``.asmx`` path."""

    endpoints: dict[str, Endpoint] = {}

    def _route(self) -> bool:
        path, _, query = self.path.partition("?")
        at = path.lower().find(".asmx") + len(".asmx")
        found = self.endpoints.get(path[:at].lower()) if at >= len(".asmx") else None
        if found is None:
            self.send_error(404, "Not Found")
            return False
        self.server = found  # type: ignore[assignment]  # the handler reads .dispatcher
        rest = path[at:] or "/"
        self.path = rest if query.lower() == "wsdl" or not query else f"{rest}?{query}"
        return True

    def do_GET(self) -> None:
        if self._route():
            super().do_GET()

    def do_POST(self) -> None:
        if self._route():
            super().do_POST()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # PySimpleSOAP logs every fault's traceback
    server = ThreadingHTTPServer(("127.0.0.1", args.port), SchoolMobileHandler)
    base = f"http://127.0.0.1:{server.server_port}"
    SchoolMobileHandler.endpoints = {f"/{name.lower()}.asmx": Endpoint(dispatcher(name, base))
                                     for name in SERVICES}
    print(f"listening on {base}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
