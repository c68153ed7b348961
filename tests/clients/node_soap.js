// Node's `soap` package as a real client: for each job, loads the WSDL from the URL given and
// calls operations on the port named, at the address that WSDL names (no override).
// stdin: [{"wsdl": URL, "port": "XSoap12", "soap12": true,
//          "calls": [{"operation": "Op", "args": {...}}]}, ...]
// stdout: one JSON line per call: {"operation", "port", "endpoint", "ok", "result"|"error"}.
// Run with NODE_PATH=tools/node_modules (scripts/setup installs `soap` there).
const soap = require("soap");

async function run(job) {
  const client = await soap.createClientAsync(job.wsdl, { forceSoap12Headers: !!job.soap12 });
  const services = client.describe();
  const service = Object.keys(services).find((name) => job.port in services[name]);
  if (!service) throw new Error(`no port ${job.port} in ${job.wsdl}`);
  const port = client[service][job.port];
  const endpoint = client.wsdl.definitions.services[service].ports[job.port].location;
  for (const call of job.calls) {
    const line = { operation: call.operation, port: job.port, endpoint };
    try {
      const result = await new Promise((resolve, reject) => port[call.operation](
        call.args, (err, res) => (err ? reject(err) : resolve(res))));
      Object.assign(line, { ok: true, result });
    } catch (err) {
      Object.assign(line, { ok: false, error: String(err && err.message ? err.message : err) });
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  for (const job of JSON.parse(Buffer.concat(chunks).toString("utf8"))) await run(job);
}

main().catch((err) => {
  process.stderr.write(`node soap client: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
