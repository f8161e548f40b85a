#!/usr/bin/env node
// snapshot_peer.js: the JavaScript side of the snapshot benchmark (issue 6).
//
//   node snapshot_peer.js STATE.json AW_SNAPSHOT.json
//
// The seed's SlimAgentStateSerializer (seed 003) written the way a
// JavaScript user would: JSON.parse the full state, slice the most recent
// messages and steps, map them to their slim form, JSON.stringify the
// snapshot. 'standard' configuration (50 messages, 20 steps, 2,000 of
// content, tool results and steps kept, no continuation trace, tool
// arguments not redacted). Where the seed's PHP has faults that agentwire
// documents fixing, the peer does what agentwire does, so the outputs can be
// compared:
//   - steps keep their original number ("step_number", else position + 1 in
//     the full list), where the seed renumbers the kept ones from 1;
//   - "metadata" is read as well as "_metadata"; a step's duration_ms is
//     kept; tool call names come from "name", else "function.name";
//   - times (RFC 3339 with any offset, or epoch seconds) are written as
//     RFC 3339 UTC without fractions ("2026-01-16T10:00:00Z"), where PHP's
//     DATE_ATOM would write "+00:00".
// One difference is left as JavaScript has it, and is the one documented
// difference of the comparison: content is measured and cut with
// String.length / slice, in UTF-16 code units (the seed's PHP uses bytes),
// where agentwire counts characters and never cuts one. The two agree
// unless the text before the cut holds characters outside the BMP (emoji).
//
// Best of 5, end to end from the state's text in memory (already decoded
// to a JS string, which favours the peer), MB/s of input bytes, and the
// best time of each phase. Then, untimed, compares with agentwire's
// snapshot (AW_SNAPSHOT.json, written by bench_snapshot): byte for byte
// as is; and, where they differ, checks that every differing message
// content is the documented difference (agentwire's is the cut at 2,000
// characters, the peer's at 2,000 UTF-16 units) and that with those
// contents taken from agentwire the rest is byte for byte the same.
// Prints "key value" lines (bench/run_snapshot.sh joins them with
// agentwire's). Times from process.hrtime.bigint(); MB is 10^6 bytes.
"use strict";
const fs = require("fs");

const PRESETS = {
  minimal: { maxMessages: 20, maxSteps: 0, maxContentLength: 500, includeToolResults: false,
             includeSteps: false, includeContinuationTrace: false, redactToolArgs: false },
  standard: { maxMessages: 50, maxSteps: 20, maxContentLength: 2000, includeToolResults: true,
              includeSteps: true, includeContinuationTrace: false, redactToolArgs: false },
  full: { maxMessages: 100, maxSteps: 50, maxContentLength: 5000, includeToolResults: true,
          includeSteps: true, includeContinuationTrace: true, redactToolArgs: false },
};

const num = (v) => (typeof v === "number" ? v : 0);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function time(v) {
  if (v === undefined || v === null) return null;
  const d = typeof v === "number" ? new Date(Math.floor(v) * 1000) : new Date(v);
  return d.toISOString().slice(0, 19) + "Z";
}

// the last n items (none when n <= 0: slice(-0) would keep them all)
function lastOf(items, n) {
  return n > 0 ? items.slice(-n) : [];
}

function toolCallRef(tc) {
  const name = typeof tc.name === "string" ? tc.name : tc.function?.name;
  return { id: typeof tc.id === "string" ? tc.id : null, name: typeof name === "string" ? name : "unknown" };
}

function slimMessage(message, cfg) {
  let content = message.content === undefined ? "" : message.content;
  if (typeof content === "string" && content.length > cfg.maxContentLength) {
    content = content.slice(0, cfg.maxContentLength) + "...";
  }
  let metadata = "metadata" in message ? message.metadata : message._metadata;
  metadata = isObject(metadata) ? metadata : {};
  if (cfg.redactToolArgs && Array.isArray(metadata.tool_calls)) {
    metadata = { ...metadata, tool_calls: metadata.tool_calls.map(toolCallRef) };
  }
  if (!cfg.includeToolResults && message.role === "tool") content = "[tool result omitted]";
  return { role: message.role ?? "user", content, metadata };
}

function slimStep(step, index) {
  const calls = Array.isArray(step.tool_calls) ? step.tool_calls : [];
  const errors = step.errors;
  return {
    step_number: typeof step.step_number === "number" ? step.step_number : index + 1,
    type: typeof step.type === "string" ? step.type : null,
    has_tool_calls: typeof step.has_tool_calls === "boolean" ? step.has_tool_calls : calls.length > 0,
    finish_reason: typeof step.finish_reason === "string" ? step.finish_reason : null,
    errors: Array.isArray(errors) ? errors.length : typeof errors === "number" ? Math.trunc(errors) : 0,
    usage: { total: num("usage" in step ? step.usage?.total : step.total) },
    duration_ms: typeof step.duration_ms === "number" ? step.duration_ms : null,
    tool_calls: calls.map(toolCallRef),
  };
}

function slimState(state, cfg) {
  const steps = state.steps ?? [];
  const execution = state.execution ?? {};
  const usage = state.usage ?? {};
  const firstStep = Math.max(0, steps.length - Math.max(0, cfg.maxSteps));
  const c = state.last_continuation;
  return {
    agent_id: state.agent_id,
    parent_agent_id: state.parent_agent_id ?? null,
    status: state.status,
    step_count: typeof state.step_count === "number" ? state.step_count : steps.length,
    usage: { prompt: num(usage.prompt), completion: num(usage.completion), total: num(usage.total) },
    execution: {
      started_at: time(execution.started_at),
      updated_at: time(execution.updated_at),
      cumulative_seconds: num(execution.cumulative_seconds),
    },
    messages: lastOf(state.messages ?? [], cfg.maxMessages).map((m) => slimMessage(m, cfg)),
    steps: cfg.includeSteps ? lastOf(steps, cfg.maxSteps).map((s, i) => slimStep(s, firstStep + i)) : [],
    last_continuation:
      cfg.includeContinuationTrace && isObject(c)
        ? { should_continue: c.should_continue ?? null, stop_reason: c.stop_reason ?? null, resolved_by: c.resolved_by ?? null }
        : null,
    metadata: isObject(state.metadata) ? state.metadata : {},
  };
}

const now = () => process.hrtime.bigint();
const ms = (t0, t1) => Number(t1 - t0) / 1e6;

// untimed: compare with agentwire's snapshot
function compare(state, snap, cfg, awPath, out) {
  const awBytes = fs.readFileSync(awPath);
  const mine = Buffer.from(JSON.stringify(snap), "utf8");
  out("identical.bytes", mine.equals(awBytes) ? "yes" : "no");
  const aw = JSON.parse(awBytes.toString("utf8"));
  const msgs = state.messages ?? [];
  const first = msgs.length - aw.messages.length;
  let cut = 0;
  let documented = 0;
  let unexplained = 0;
  const patched = { ...snap, messages: snap.messages.map((m) => ({ ...m })) };
  for (let i = 0; i < patched.messages.length && i < aw.messages.length; i++) {
    const orig = msgs[first + i]?.content;
    if (typeof orig === "string" && orig.length > cfg.maxContentLength) cut++;
    const a = aw.messages[i].content;
    const p = patched.messages[i].content;
    if (a === p) continue;
    const chars = typeof orig === "string" ? Array.from(orig) : null;
    const byChars = chars && (chars.length > cfg.maxContentLength ? chars.slice(0, cfg.maxContentLength).join("") + "..." : orig);
    if (byChars !== null && a === byChars) {
      documented++;
      patched.messages[i].content = a;
    } else {
      unexplained++;
      process.stderr.write(`snapshot_peer: messages[${i}].content differs, and not by the UTF-16 / character cut\n`);
    }
  }
  const rest = Buffer.from(JSON.stringify(patched), "utf8");
  let same = rest.equals(awBytes);
  if (!same) {
    let i = 0;
    while (i < rest.length && i < awBytes.length && rest[i] === awBytes[i]) i++;
    process.stderr.write(
      `snapshot_peer: snapshots differ at byte ${i} (peer ${rest.length} bytes, agentwire ${awBytes.length})\n` +
        `  peer:      ${JSON.stringify(rest.subarray(Math.max(0, i - 80), i + 80).toString())}\n` +
        `  agentwire: ${JSON.stringify(awBytes.subarray(Math.max(0, i - 80), i + 80).toString())}\n`,
    );
  }
  out("cmp.messages", aw.messages.length);
  out("cmp.contents_cut", cut);
  out("cmp.contents_utf16_vs_chars", documented);
  out("cmp.contents_unexplained", unexplained);
  out("identical.rest", same && unexplained === 0 ? "yes" : "no");
}

function main() {
  const [statePath, awPath] = process.argv.slice(2);
  if (!awPath) {
    process.stderr.write("usage: node snapshot_peer.js STATE.json AW_SNAPSHOT.json\n");
    process.exit(2);
  }
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  out("node.version", process.version);
  const inputBytes = fs.statSync(statePath).size;
  const text = fs.readFileSync(statePath, "utf8");
  const cfg = PRESETS.standard;
  const REPS = 5;
  let best = Infinity, bestParse = Infinity, bestSlim = Infinity, bestWrite = Infinity;
  let state = null, snap = null, json = "";
  for (let r = 0; r < REPS; r++) {
    state = snap = null;
    const t0 = now();
    const s = JSON.parse(text);
    const t1 = now();
    const sn = slimState(s, cfg);
    const t2 = now();
    json = JSON.stringify(sn);
    const t3 = now();
    state = s;
    snap = sn;
    best = Math.min(best, ms(t0, t3));
    bestParse = Math.min(bestParse, ms(t0, t1));
    bestSlim = Math.min(bestSlim, ms(t1, t2));
    bestWrite = Math.min(bestWrite, ms(t2, t3));
  }
  out("js.out_bytes", Buffer.byteLength(json, "utf8"));
  out("js.seconds", (best / 1e3).toFixed(6));
  out("js.mbps", (inputBytes / (best / 1e3) / 1e6).toFixed(1));
  out("js.parse_ms", bestParse.toFixed(3));
  out("js.slim_ms", bestSlim.toFixed(3));
  out("js.write_ms", bestWrite.toFixed(3));
  compare(state, snap, cfg, awPath, out);
}

main();
