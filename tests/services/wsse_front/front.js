// A WS-Security front of a deployment, playing WSE 3.0's part on the server (its
// UsernameTokenManager): every SOAP envelope must carry a wsse:Security header with a
// Timestamp and a UsernameToken of WSSE_USER whose password checks out, verified with Node's
// soap package (soap.passwordDigest: Base64(SHA-1(nonce + created + password)) for
// PasswordDigest; the password itself for PasswordText), its Created within 5 minutes, its
// Nonce never seen before. The Security header is then taken off (the service behind does not
// understand it: mustUnderstand) and the envelope passed on to UPSTREAM, Host kept. A refused
// token gets WSE's answer: HTTP 500, a SOAP fault wsse:FailedAuthentication (wsse:InvalidSecurity
// when there is no Security header). Other requests (HTTP GET/POST, a document that is not an
// envelope) pass as they are.
//
//   UPSTREAM=http://127.0.0.1:33325 WSSE_USER=alice WSSE_PASSWORD=... \
//     NODE_PATH=tools/node_modules node tests/services/wsse_front/front.js [PORT]
// Prints "listening on http://127.0.0.1:PORT" when ready.
'use strict';

const http = require('http');
const soap = require('soap');
const { DOMParser, XMLSerializer } = require('@xmldom/xmldom');

const WSSE = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';
const WSU = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd';
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const upstream = new URL(process.env.UPSTREAM);
const seen = new Set();

function one(parent, ns, name) {
  const found = parent ? parent.getElementsByTagNameNS(ns, name) : [];
  return found.length ? found[0] : null;
}

function text(element) {
  return element ? (element.textContent || '').trim() : '';
}

// Why the token is refused, or null when it checks out.
function refused(security) {
  if (!security) return ['InvalidSecurity', 'Security requirements are not satisfied because '
    + 'the security header is not present in the incoming message.'];
  const token = one(security, WSSE, 'UsernameToken');
  const password = one(token, WSSE, 'Password');
  const nonce = text(one(token, WSSE, 'Nonce'));
  const created = text(one(token, WSU, 'Created'));
  const stamp = one(security, WSU, 'Timestamp');
  const failed = ['FailedAuthentication',
    'The security token could not be authenticated or authorized'];
  if (!token || !password || text(one(token, WSSE, 'Username')) !== process.env.WSSE_USER) {
    return failed;
  }
  const type = password.getAttribute('Type') || '';
  const expected = type.endsWith('#PasswordText') ? process.env.WSSE_PASSWORD
    : soap.passwordDigest(nonce, created, process.env.WSSE_PASSWORD);
  if (text(password) !== expected) return failed;
  const age = Math.abs(Date.now() - Date.parse(created));
  const expires = Date.parse(text(one(stamp, WSU, 'Expires')));
  if (!stamp || !(age < 5 * 60 * 1000) || !(expires > Date.now())) {
    return ['MessageExpired', 'The message has expired'];
  }
  if (!nonce || seen.has(nonce)) return failed;  // a replayed token
  seen.add(nonce);
  return null;
}

function fault(response, soapNs, [code, reason]) {
  const body = soapNs === SOAP12
    ? `<soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value><soap:Subcode><soap:Value>`
      + `wsse:${code}</soap:Value></soap:Subcode></soap:Code><soap:Reason><soap:Text `
      + `xml:lang="en">${reason}</soap:Text></soap:Reason></soap:Fault>`
    : `<soap:Fault><faultcode>wsse:${code}</faultcode><faultstring>${reason}</faultstring>`
      + `</soap:Fault>`;
  const xml = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${soapNs}" `
    + `xmlns:wsse="${WSSE}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
  response.writeHead(500, {
    'Content-Type': soapNs === SOAP12 ? 'application/soap+xml; charset=utf-8'
      : 'text/xml; charset=utf-8',
  });
  response.end(xml);
}

function pass(request, response, body) {
  const headers = { ...request.headers, 'content-length': String(body.length) };
  delete headers.connection;
  const out = http.request({
    host: upstream.hostname, port: upstream.port, method: request.method, path: request.url,
    headers,
  }, (answer) => {
    const kept = { ...answer.headers };
    delete kept.connection;
    delete kept['transfer-encoding'];
    const parts = [];
    answer.on('data', (d) => parts.push(d));
    answer.on('end', () => {
      const data = Buffer.concat(parts);
      kept['content-length'] = String(data.length);
      response.writeHead(answer.statusCode, answer.statusMessage, kept);
      response.end(data);
    });
  });
  out.on('error', (e) => { response.writeHead(502); response.end(String(e)); });
  out.end(body);
}

const server = http.createServer((request, response) => {
  const parts = [];
  request.on('data', (d) => parts.push(d));
  request.on('end', () => {
    let body = Buffer.concat(parts);
    let doc = null;
    // the body's own charset (ISO-8859-1 is what the ASMX matrix also sends): read and passed
    // on in it, so the service behind gets the bytes as ASP.NET would
    const charset = /charset="?(iso-8859-1|latin1)/i.test(request.headers['content-type'] || '')
      ? 'latin1' : 'utf8';
    if (request.method === 'POST' && body.length && /xml/.test(request.headers['content-type'])) {
      let errors = 0;
      const parser = new DOMParser({ errorHandler: { error() { errors += 1; },
        fatalError() { errors += 1; }, warning() {} } });
      try {
        doc = parser.parseFromString(body.toString(charset), 'text/xml');
      } catch (e) {
        doc = null;
      }
      if (errors) doc = null;
    }
    const root = doc && doc.documentElement;
    if (!root || root.localName !== 'Envelope'
        || ![SOAP11, SOAP12].includes(root.namespaceURI)) {
      pass(request, response, body);  // not a SOAP envelope: as it is
      return;
    }
    const header = one(root, root.namespaceURI, 'Header');
    const security = one(header, WSSE, 'Security');
    const why = refused(security);
    if (why) {
      fault(response, root.namespaceURI, why);
      return;
    }
    header.removeChild(security);
    body = Buffer.from(new XMLSerializer().serializeToString(doc), charset);
    pass(request, response, body);
  });
});

server.listen(Number(process.argv[2] || 0), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => process.exit(0));
}
