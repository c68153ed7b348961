// School Mobile on Node's `soap` package (its server, soap.listen), as a team migrating off ASMX
// would write it: the WSDL of each of the seven .asmx endpoints saved from the ASMX service's
// ?WSDL (wsdl/, its addresses pointed at http://localhost:8000, replaced by the real address at
// start), one soap.listen per endpoint on one http server, the operations as plain functions.
//
// Whatever the soap package does differently from ASMX is left as it does it: it serves SOAP
// only (the HTTP GET/POST bindings the saved WSDLs still describe are not served), answers
// SOAP 1.2 with a SOAP 1.1 envelope (no forceSoap12Headers), echoes the request's Content-Type.
//
//   NODE_PATH=tools/node_modules node tests/services/node_soap/server.js [PORT]
// PORT 0 (the default) takes a free port; prints "listening on http://127.0.0.1:PORT" when ready.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const soap = require('soap');

const WSDL_ADDRESS = 'http://localhost:8000';

const services = {
  AuthCodeSending: {
    AuthCode(args) { return {}; },
  },
  CenterlogOut: {
    LogoutFromSchool(args) { return {}; },
  },
  GetStudentsAudit: {
    GetStudentsAudtiNote(args) { return {}; },
  },
  GetTeacherSubjects: {
    GetTeacherSubjectsByID(args) { return {}; },
  },
  GetTeacherGroups: {
    GetTeacherGrpupsByID(args) { return {}; },
  },
  PushNotificationMobile: {
    GetTokenDevice(args) { return { GetTokenDeviceResult: 'token-for-' + args.id }; },
  },
  NotificationNotes: {
    SendNotificationType(args) { return {}; },
    SendMarkNotes(args) { return {}; },
  },
};

const server = http.createServer((request, response) => {
  response.statusCode = 404;
  response.end('404: Not Found: ' + request.url);
});

server.listen(Number(process.argv[2] || 0), '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const names = Object.keys(services);
  let pending = names.length;
  for (const name of names) {
    const xml = fs.readFileSync(path.join(__dirname, 'wsdl', `${name}.wsdl`), 'utf8')
      .split(WSDL_ADDRESS).join(base);
    // The WSDL's SOAP 1.1 port comes first: soap binds every request on the path to it.
    const ports = { [`${name}Soap`]: services[name], [`${name}Soap12`]: services[name] };
    soap.listen(server, {
      path: `/${name}.asmx`,
      services: { [name]: ports },
      xml,
      callback: (err) => {
        if (err) {
          console.error(`${name}: ${err}`);
          process.exit(1);
        }
        pending -= 1;
        if (pending === 0) console.log(`listening on ${base}`);
      },
    });
  }
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => process.exit(0));
}
