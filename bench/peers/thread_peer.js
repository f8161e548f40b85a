#!/usr/bin/env node
// thread_peer.js: the JavaScript side of the thread benchmark (issue 3).
//
//   node thread_peer.js CORPUS.jsonl APPEND_EVENT.json AW_PREFIX
//     (APPEND_EVENT.json "-": no append measurements)
//   node thread_peer.js --encode EVENTS.jsonl > THREAD.xml
//
// A <thread> serializer written the way the reference TypeScript agent writes
// it (seed 000, SPEC-01): JSON.parse per line, a Map toolCallId -> toolName
// built in one pass first, plain string concatenation with template literals,
// escapeXml as five chained .replace calls (& first), JSON.stringify(args),
// plus the tool_output additions (duration_ms, parallel_group,
// compact JSON for results that are not strings). No npm dependencies.
//
// Prints "key value" lines, the same measurements bench/bench_thread.c makes
// (bench/run_thread.sh joins the two), and checks its output against the
// XML agentwire wrote (AW_PREFIX.xml, AW_PREFIX.append-<S>MB.xml); the checks
// are not timed. Times come from process.hrtime.bigint(); MB is 10^6 bytes.
"use strict";
const fs = require("fs");

const { escapeXml } = require("./escape_xml");

const ROLE = { user: "human", assistant: "ai", system: "system" };

// One <event> line, or null for events the thread does not carry.
function serializeEvent(event, id, toolNames) {
  switch (event.type) {
    case "message":
      return `  <event type="${ROLE[event.role]}" id="${id}" iteration="${event.iteration}">${escapeXml(event.content)}</event>`;
    case "tool_call":
      return `  <event type="tool_input" id="${id}" name="${escapeXml(event.toolName)}" iteration="${event.iteration}">${escapeXml(JSON.stringify(event.args))}</event>`;
    case "tool_result": {
      const name = toolNames.get(event.toolCallId) ?? "unknown";
      let attrs = `id="${id}" name="${escapeXml(name)}" status="success" iteration="${event.iteration}"`;
      if (event.durationMs !== undefined) attrs += ` duration_ms="${event.durationMs}"`;
      if (event.parallelGroup !== undefined) attrs += ` parallel_group="${escapeXml(String(event.parallelGroup))}"`;
      const body = typeof event.result === "string" ? event.result : JSON.stringify(event.result);
      return `  <event type="tool_output" ${attrs}>${escapeXml(body)}</event>`;
    }
    case "error":
      return `  <event type="error" id="${id}" iteration="${event.iteration}" recoverable="${String(event.recoverable)}">${escapeXml(event.error)}</event>`;
    case "human_input_requested":
      return `  <event type="human_input_requested" id="${id}" iteration="${event.iteration}">${escapeXml(event.question)}</event>`;
    case "human_input_received":
      return `  <event type="human_input_received" id="${id}" iteration="${event.iteration}">${escapeXml(event.response)}</event>`;
    case "completion":
      return `  <event type="completion" id="${id}" iteration="${event.iteration}">${escapeXml(event.result)}</event>`;
    case "summary":
      return `  <event type="summary" id="${id}" iteration="${event.iteration}" summarizedIterations="${escapeXml(event.summarizedIterations.join(","))}">${escapeXml(event.summary)}</event>`;
    default:
      return null; // approval, plan and unknown types use up their id only
  }
}

function serializeThreadToXml(events, options = {}) {
  const toolNames = new Map();
  for (const event of events) {
    if (event.type === "tool_call") toolNames.set(event.toolCallId, event.toolName);
  }
  const lines = ["<thread>"];
  for (let i = 0; i < events.length; i++) {
    const line = serializeEvent(events[i], i, toolNames);
    if (line !== null) lines.push(line);
  }
  lines.push("</thread>");
  let xml = lines.join("\n");
  if (options.responsePrefix) xml += `\n${options.responsePrefix}`;
  return xml;
}

function parseLines(text) {
  const events = [];
  for (const line of text.split("\n")) {
    if (line.trim() !== "") events.push(JSON.parse(line));
  }
  return events;
}

const seconds = (t0, t1) => Number(t1 - t0) / 1e9;
const now = () => process.hrtime.bigint();

function sameBytes(xml, path, label) {
  const mine = Buffer.from(xml, "utf8");
  const theirs = fs.readFileSync(path);
  if (mine.equals(theirs)) return true;
  let i = 0;
  while (i < mine.length && i < theirs.length && mine[i] === theirs[i]) i++;
  process.stderr.write(
    `thread_peer: ${label}: outputs differ at byte ${i} (peer ${mine.length} bytes, agentwire ${theirs.length})\n` +
      `  peer:      ${JSON.stringify(mine.subarray(Math.max(0, i - 60), i + 60).toString())}\n` +
      `  agentwire: ${JSON.stringify(theirs.subarray(Math.max(0, i - 60), i + 60).toString())}\n`,
  );
  return false;
}

// The reference's command as a user runs it, a whole process: read the
// file, serialize, write the thread to stdout (with a newline, as agentwire
// does).
function encodeFile(path) {
  const xml = serializeThreadToXml(parseLines(fs.readFileSync(path, "utf8")));
  fs.writeSync(1, xml + "\n");
}

function main() {
  if (process.argv[2] === "--encode") return encodeFile(process.argv[3]);
  const [corpusPath, appendPath, awPrefix] = process.argv.slice(2);
  if (!awPrefix) {
    process.stderr.write("usage: node thread_peer.js CORPUS.jsonl APPEND_EVENT.json AW_PREFIX\n");
    process.exit(2);
  }
  const REPS = 5;
  const text = fs.readFileSync(corpusPath, "utf8");
  const inputBytes = fs.statSync(corpusPath).size;
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  out("node.version", process.version);

  // 1. in-memory encode: JSON.parse not timed; serialize, best of 5
  const events = parseLines(text);
  let best = Infinity;
  let xml = "";
  for (let r = 0; r < REPS; r++) {
    const t0 = now();
    xml = serializeThreadToXml(events);
    const t = seconds(t0, now());
    if (t < best) best = t;
  }
  const outBytes = Buffer.byteLength(xml, "utf8");
  out("js.encode.out_bytes", outBytes);
  out("js.encode.seconds", best.toFixed(6));
  out("js.encode.mbps", (outBytes / best / 1e6).toFixed(1));
  out("identical.encode", sameBytes(xml, `${awPrefix}.xml`, "encode") ? "yes" : "no");
  xml = "";

  // 2. end to end from the corpus text in memory (already decoded to a JS
  // string, which favours the peer): JSON.parse of each line + serialize
  best = Infinity;
  for (let r = 0; r < REPS; r++) {
    const t0 = now();
    const x = serializeThreadToXml(parseLines(text));
    const t = seconds(t0, now());
    if (t < best) best = t;
    if (Buffer.byteLength(x, "utf8") !== outBytes) throw new Error("end-to-end output differs in length");
  }
  out("js.e2e.seconds", best.toFixed(6));
  out("js.e2e.mbps", (inputBytes / best / 1e6).toFixed(1));

  if (appendPath === "-") return; // no append measurements

  // 3. append one event the reference's way: push it, serialize everything
  // again. The thread of S MB holds the corpus's first events up to S MB, as
  // agentwire's writer builds it.
  const extra = JSON.parse(fs.readFileSync(appendPath, "utf8"));
  const toolNames = new Map();
  let len = Buffer.byteLength("<thread>\n</thread>");
  let k = 0;
  const appends = { 1: 21, 4: 11, 16: 7 };
  let identical = true;
  for (const mb of [1, 4, 16]) {
    const target = mb * 1e6;
    while (len < target && k < events.length) {
      const ev = events[k];
      if (ev.type === "tool_call") toolNames.set(ev.toolCallId, ev.toolName);
      const line = serializeEvent(ev, k, toolNames);
      if (line !== null) len += Buffer.byteLength(line, "utf8") + 1;
      k++;
    }
    const thread = events.slice(0, k);
    const n = appends[mb];
    const times = [];
    for (let r = 0; r < n; r++) {
      const t0 = now();
      thread.push(extra);
      const x = serializeThreadToXml(thread);
      times.push(seconds(t0, now()));
      if (r === 0) identical = sameBytes(x, `${awPrefix}.append-${mb}MB.xml`, `append ${mb} MB`) && identical;
    }
    times.sort((a, b) => a - b);
    out(`js.append.${mb}.prefix_events`, k);
    out(`js.append.${mb}.appends`, n);
    out(`js.append.${mb}.median_us`, (times[n >> 1] * 1e6).toFixed(3));
    out(`js.append.${mb}.mean_us`, ((times.reduce((a, b) => a + b, 0) / n) * 1e6).toFixed(3));
  }
  out("identical.append", identical ? "yes" : "no");
}

main();
