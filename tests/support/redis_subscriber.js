// A Redis subscriber for the tests, on Node's net module alone (RESP by
// hand, no npm package): PSUBSCRIBE to a pattern, one JSON line per message
// on stdout: {"channel": "...", "payload": "..."}. When the connection is
// lost it connects again (every 50 ms) until stopped, and each time it is
// subscribed it appends a line to READY_FILE, so a test knows when
// messages can reach it.
//
//   node redis_subscriber.js PORT PATTERN READY_FILE
'use strict';
const net = require('net');
const fs = require('fs');
const [port, pattern, readyFile] = process.argv.slice(2);

// One RESP value from buf at pos: [value, next] or null when incomplete.
function parse(buf, pos) {
  if (pos >= buf.length) return null;
  const eol = buf.indexOf('\r\n', pos);
  if (eol < 0) return null;
  const type = String.fromCharCode(buf[pos]);
  const line = buf.toString('utf8', pos + 1, eol);
  if (type === '+' || type === '-') return [line, eol + 2];
  if (type === ':') return [Number(line), eol + 2];
  if (type === '$') {
    const n = Number(line);
    if (n < 0) return [null, eol + 2];
    if (buf.length < eol + 2 + n + 2) return null;
    return [buf.toString('utf8', eol + 2, eol + 2 + n), eol + 2 + n + 2];
  }
  if (type === '*') {
    const n = Number(line);
    const out = [];
    let p = eol + 2;
    for (let i = 0; i < n; i++) {
      const r = parse(buf, p);
      if (!r) return null;
      out.push(r[0]);
      p = r[1];
    }
    return [out, p];
  }
  throw new Error('bad RESP type ' + type);
}

function connect() {
  const sock = net.connect(Number(port), '127.0.0.1');
  let buf = Buffer.alloc(0);
  sock.on('connect', () => {
    sock.write(`*2\r\n$10\r\nPSUBSCRIBE\r\n$${Buffer.byteLength(pattern)}\r\n${pattern}\r\n`);
  });
  sock.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    let r;
    while ((r = parse(buf, 0))) {
      buf = buf.subarray(r[1]);
      const v = r[0];
      if (Array.isArray(v) && v[0] === 'psubscribe') fs.appendFileSync(readyFile, 'subscribed\n');
      else if (Array.isArray(v) && v[0] === 'pmessage')
        process.stdout.write(JSON.stringify({ channel: v[2], payload: v[3] }) + '\n');
    }
  });
  sock.on('error', () => {});
  sock.on('close', () => setTimeout(connect, 50));
}
connect();
process.on('SIGTERM', () => process.exit(0));
