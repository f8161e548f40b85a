#!/usr/bin/env node
// transport_peer.js: the JavaScript side of the transport benchmark (issue 4).
//
//   node transport_peer.js DATA_DIR NONCE MAX_CALLS [BUDGET_SECONDS]
//
// A streaming tag parser written the way the public implementations of the
// XML tool transport are: each chunk is appended to a string buffer, and on
// every chunk the whole accumulated buffer is searched again from its start
// with indexOf for the tag prefix "<ai-agent-", a regular expression (sticky,
// at that index) reads the nonce, the slot and the attributes of the opening
// tag, indexOf finds "</ai-agent-NONCE-SLOT>", and a tag seen complete for
// the first time is validated (nonce, open slot, allowed tool, non-empty
// payload that JSON.parse turns into an object; FINAL: status and format)
// and reported. Tags already reported are remembered by position and passed
// over on the next chunks, but still found again by the scan: that re-scan
// is what makes the cost quadratic in the reply length at small chunks.
// No npm packages.
//
// It reads DATA_DIR/reply-<S>MB.txt (S = 1, 4, 16, written by
// bench/bench_transport.c) and feeds each whole, in 16-character chunks and
// in 1-character chunks (the reply is decoded to a JS string first, untimed,
// and cut into chunk strings untimed; nearly every character is one byte).
// Prints "key value" lines like bench_transport (bench/run_transport.sh
// joins them): best of up to 5 runs (fewer once 3 s are spent), MB/s of reply
// bytes, and the calls and final reports found, which the run script checks
// against agentwire's. A run that passes BUDGET_SECONDS (default 10) is
// abandoned: it prints js.<S>.<chunk>.timeout_s and the bytes fed by then,
// and the larger replies at that chunk size are skipped (the cost only
// grows with the square of the length). MB is 10^6 bytes; times from
// process.hrtime.bigint().
"use strict";
const fs = require("fs");
const path = require("path");

const PREFIX = "<ai-agent-";
const OPEN_RE = /<ai-agent-([0-9a-f]{8})-(\d{4}|FINAL|PROGRESS)((?:\s+[A-Za-z_][\w.-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*>/y;
const ATTR_RE = /([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const STATUSES = new Set(["success", "failure", "partial"]);

class XmlToolParser {
  constructor(opts) {
    this.nonce = opts.nonce;
    this.tools = new Set(opts.tools);
    this.firstSlot = (opts.turn - 1) * opts.maxCalls + 1;
    this.lastSlot = opts.turn * opts.maxCalls;
    this.format = opts.format;
    this.buffer = "";
    this.done = new Set(); // start offsets of tags already handled
    this.usedSlots = new Set();
    this.calls = [];
    this.rejected = [];
    this.finalReport = null;
  }

  push(chunk) {
    this.buffer += chunk;
    this.scan();
  }

  end() {
    this.scan();
    return { calls: this.calls, finalReport: this.finalReport, rejected: this.rejected };
  }

  scan() {
    const buf = this.buffer;
    let from = 0;
    for (;;) {
      const start = buf.indexOf(PREFIX, from);
      if (start === -1) return;
      OPEN_RE.lastIndex = start;
      const m = OPEN_RE.exec(buf);
      if (m === null) {
        from = start + 1; // not a tag, or not complete yet
        continue;
      }
      const [open, nonce, slot, attrText] = m;
      const closeTag = `</ai-agent-${nonce}-${slot}>`;
      const end = buf.indexOf(closeTag, start + open.length);
      if (end === -1) {
        from = start + open.length; // wait for the rest
        continue;
      }
      if (!this.done.has(start)) {
        this.done.add(start);
        this.handle(nonce, slot, attrText, buf.slice(start + open.length, end));
      }
      from = end + closeTag.length;
    }
  }

  handle(nonce, slot, attrText, payload) {
    const attrs = {};
    for (const a of attrText.matchAll(ATTR_RE)) attrs[a[1]] = a[2] !== undefined ? a[2] : a[3];
    const reject = (reason) => this.rejected.push({ slot, tool: attrs.tool, reason });
    if (nonce !== this.nonce) return reject("wrong_nonce");
    if (this.usedSlots.has(slot)) return reject("duplicate_slot");
    if (slot === "FINAL") {
      if (attrs.tool !== "agent__final_report") return reject("tool_not_allowed");
      if (!STATUSES.has(attrs.status)) return reject("bad_status");
      if (attrs.format !== this.format) return reject("wrong_format");
      if (payload.trim() === "") return reject("empty_payload");
      this.usedSlots.add(slot);
      this.finalReport = { status: attrs.status, format: attrs.format, content: payload };
      return;
    }
    if (slot === "PROGRESS") return reject("not_allowed");
    const n = Number(slot);
    if (n < this.firstSlot || n > this.lastSlot) return reject("dead_slot");
    if (!this.tools.has(attrs.tool)) return reject("tool_not_allowed");
    const text = payload.trim();
    if (text === "") return reject("empty_payload");
    let args;
    try {
      args = JSON.parse(text);
    } catch (e) {
      return reject("invalid_json");
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) return reject("invalid_json");
    this.usedSlots.add(slot);
    this.calls.push({ slot, tool: attrs.tool, args, source: "xml", command: attrs.tool });
  }
}

const now = () => process.hrtime.bigint();
const seconds = (t0, t1) => Number(t1 - t0) / 1e9;

// One extraction; null when the budget ran out (then out.doneChars says how
// far it got).
function run(chunks, opts, budget, out) {
  const t0 = now();
  const deadline = t0 + BigInt(Math.round(budget * 1e9));
  const p = new XmlToolParser(opts);
  for (let i = 0; i < chunks.length; i++) {
    p.push(chunks[i]);
    if ((i & 63) === 63 && now() > deadline) {
      out.doneChars = p.buffer.length;
      return null;
    }
  }
  const r = p.end();
  out.seconds = seconds(t0, now());
  return r;
}

function cut(text, size) {
  if (size === 0) return [text];
  const chunks = new Array(Math.ceil(text.length / size));
  for (let i = 0, k = 0; i < text.length; i += size, k++) chunks[k] = text.slice(i, i + size);
  return chunks;
}

function main() {
  const [dir, nonce, maxCallsArg, budgetArg] = process.argv.slice(2);
  if (!maxCallsArg) {
    process.stderr.write("usage: node transport_peer.js DATA_DIR NONCE MAX_CALLS [BUDGET_SECONDS]\n");
    process.exit(2);
  }
  const budget = Number(budgetArg || 10);
  const opts = {
    nonce,
    maxCalls: Number(maxCallsArg),
    turn: 1,
    format: "markdown",
    tools: ["search", "fetch", "read_file", "run_shell", "write_file"],
  };
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  out("node.version", process.version);
  out("js.budget_s", budget);
  const gaveUp = new Set();
  for (const mb of [1, 4, 16]) {
    const file = path.join(dir, `reply-${mb}MB.txt`);
    const bytes = fs.statSync(file).size;
    const text = fs.readFileSync(file, "utf8");
    for (const [name, size] of [["whole", 0], ["16", 16], ["1", 1]]) {
      const key = `js.${mb}.${name}`;
      if (gaveUp.has(name)) {
        out(`${key}.skipped`, 1);
        continue;
      }
      let chunks = cut(text, size);
      let best = Infinity;
      let spent = 0;
      let result = null;
      for (let r = 0; r < 5 && spent < 3; r++) {
        const o = {};
        result = run(chunks, opts, budget, o);
        if (result === null) {
          out(`${key}.timeout_s`, budget);
          out(`${key}.done_bytes`, Buffer.byteLength(text.slice(0, o.doneChars), "utf8"));
          gaveUp.add(name);
          break;
        }
        spent += o.seconds;
        if (o.seconds < best) best = o.seconds;
      }
      chunks = null;
      if (result === null) continue;
      out(`${key}.seconds`, best.toFixed(6));
      out(`${key}.mbps`, (bytes / best / 1e6).toFixed(1));
      out(`${key}.calls`, result.calls.length);
      out(`${key}.finals`, result.finalReport ? 1 : 0);
      out(`${key}.rejected`, result.rejected.length);
    }
  }
}

main();
