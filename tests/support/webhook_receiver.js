// A webhook receiver for the tests and the benchmark, on Node's http
// module: one JSON line per request in LOG_FILE,
//   {"n": N, "status": 200, "signature_ok": true|false|null,
//    "channel": "...", "body": "..."}
// and its port in PORT_FILE once it listens (127.0.0.1, a free port).
//
//   node webhook_receiver.js PORT_FILE LOG_FILE [--secret S] [--fail-first K]
//                            [--fail-every K] [--stall]
// --fail-first K: answer 500 to the first K deliveries of each body (so
//   each envelope is retried K times); --fail-every K: answer 500 to the
//   first delivery of the 1st, (K+1)th, (2K+1)th ... body; --stall: take requests and never
//   answer (a receiver that hangs); --secret: check
//   X-Agentwire-Signature-256 with Node's own HMAC-SHA256.
'use strict';
const http = require('http');
const fs = require('fs');
const crypto = require('crypto');

const args = process.argv.slice(2);
const [portFile, logFile] = args;
let secret = null, failFirst = 0, failEvery = 0, stall = false;
for (let i = 2; i < args.length; i++) {
  if (args[i] === '--secret') secret = args[++i];
  else if (args[i] === '--fail-first') failFirst = Number(args[++i]);
  else if (args[i] === '--fail-every') failEvery = Number(args[++i]);
  else if (args[i] === '--stall') stall = true;
  else throw new Error('unknown option ' + args[i]);
}
const log = fs.openSync(logFile, 'a');
const seen = new Map(); // body -> deliveries so far
const order = new Map(); // body -> its place among distinct bodies
let n = 0;

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const body = Buffer.concat(parts);
    const text = body.toString('utf8');
    let signatureOk = null;
    if (secret !== null) {
      const want = 'sha256=' + crypto.createHmac('sha256', secret).update(body).digest('hex');
      signatureOk = req.headers['x-agentwire-signature-256'] === want;
    }
    const tries = (seen.get(text) || 0) + 1;
    seen.set(text, tries);
    if (!order.has(text)) order.set(text, order.size);
    const failing = tries <= failFirst || (failEvery && tries === 1 && order.get(text) % failEvery === 0);
    const status = stall ? 0 : failing ? 500 : 200;
    fs.writeSync(log, JSON.stringify({ n: ++n, status, signature_ok: signatureOk,
      channel: req.headers['x-agentwire-channel'] || null,
      content_type: req.headers['content-type'] || null, body: text }) + '\n');
    if (stall) return; // never answered
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(status === 200 ? 'ok' : 'try again');
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile + '.tmp', String(server.address().port));
  fs.renameSync(portFile + '.tmp', portFile);
});
process.on('SIGTERM', () => process.exit(0));
