#!/usr/bin/env node
// repair_peer.js: the JavaScript side of the JSON repair benchmark (issue 4).
//
//   node repair_peer.js DATA_DIR
//
// Reads DATA_DIR/repair-corpus.jsonl (written by bench/bench_repair.c: one
// broken document a line, {"kinds": [...], "text": "..."}), repairs every
// document with the npm package jsonrepair (bench/peers/node_modules), best
// of up to 5 passes (fewer once 10 s are spent), and prints "key value" lines
// (MB/s of input bytes, MB is 10^6 bytes; by the clock, process.hrtime.bigint(),
// and by the process's CPU time, process.cpuUsage(), all threads).
//
// Then, untimed, compares with what agentwire produced
// (DATA_DIR/repair-aw.jsonl, a JSON string or null a line): where both
// succeed, JSON.parse of both results must be the same value (objects equal
// whatever their key order, numbers by value). Prints the counts, by kind of
// breakage, and writes every disagreement to DATA_DIR/repair-disagreements.txt
// (the first ones also to stderr), each with the known difference of design
// that explains it, if one does (see explain() below).
"use strict";
const fs = require("fs");
const { same } = require("./same_value.js");
const path = require("path");
const { jsonrepair } = require(path.join(__dirname, "node_modules", "jsonrepair"));

const now = () => process.hrtime.bigint();
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const seconds = (t0, t1) => Number(t1 - t0) / 1e9;

// Why agentwire and jsonrepair disagree, as far as known differences of
// design explain it (labels joined with "+"), else "other":
//  - prose_wrapped: jsonrepair reads prose around the value as more values
//    and returns an array of them; agentwire drops the prose.
//  - invalid_escape: "C:\\Program" keeps its backslash here, jsonrepair
//    drops it (compared without backslashes).
//  - cut_string_blanks: a string cut off by the end of the text keeps its
//    trailing blanks here, jsonrepair trims them (compared trimmed).
//  - unicode_ellipsis: "…" standing for more items is dropped here and kept
//    as a string by jsonrepair (compared without "…" items).
//  - key_swallowed: jsonrepair takes "key" followed by a value without a
//    colon as the start of a longer key and swallows the text up to the
//    next quote into it (its result has a key holding a quote).
const NORMS = [
  ["invalid_escape", (x) => x.replace(/\\/g, "")],
  ["cut_string_blanks", (x) => x.trimEnd()],
  ["unicode_ellipsis", null],
];

function normalize(v, mask) {
  if (typeof v === "string") {
    for (let i = 0; i < 2; i++) if (mask & (1 << i)) v = NORMS[i][1](v);
    return v;
  }
  if (Array.isArray(v)) return v.filter((x) => !(mask & 4 && x === "\u2026")).map((x) => normalize(x, mask));
  if (v !== null && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v)) o[k] = normalize(v[k], mask);
    return o;
  }
  return v;
}

function explain(a, j, kinds) {
  const labels = [];
  if (kinds.includes("surrounding_text") && Array.isArray(j) && !Array.isArray(a)) {
    const values = j.filter((x) => typeof x !== "string");
    if (values.length === 1) {
      j = values[0];
      labels.push("prose_wrapped");
      if (same(a, j)) return labels.join("+");
    }
  }
  const keyWithQuote = (v) =>
    v !== null && typeof v === "object" &&
    (Array.isArray(v) ? v.some(keyWithQuote) : Object.keys(v).some((k) => k.includes('"') || keyWithQuote(v[k])));
  if (keyWithQuote(j)) return labels.concat("key_swallowed").join("+");
  // the fewest normalizations that make the two equal
  const masks = [1, 2, 4, 3, 5, 6, 7];
  for (const m of masks) {
    if (same(normalize(a, m), normalize(j, m))) {
      for (let i = 0; i < 3; i++) if (m & (1 << i)) labels.push(NORMS[i][0]);
      return labels.join("+");
    }
  }
  return labels.concat("other").join("+");
}

function main() {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: node repair_peer.js DATA_DIR\n");
    process.exit(2);
  }
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  const docs = fs
    .readFileSync(path.join(dir, "repair-corpus.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
  const texts = docs.map((d) => d.text);
  const inputBytes = texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
  out("node.version", process.version);
  out("jsonrepair.version", require(path.join(__dirname, "node_modules", "jsonrepair", "package.json")).version);

  // ---- timed: jsonrepair over every document
  let best = Infinity;
  let bestCpu = Infinity;
  let spent = 0;
  let results = null;
  let passes = 0;
  for (let r = 0; r < 5 && spent < 10; r++) {
    const res = new Array(texts.length);
    const c0 = cpuNow();
    const t0 = now();
    for (let i = 0; i < texts.length; i++) {
      try {
        res[i] = jsonrepair(texts[i]);
      } catch (e) {
        res[i] = null;
      }
    }
    const t = seconds(t0, now());
    const cpu = cpuNow() - c0;
    spent += t;
    passes++;
    if (t < best) best = t;
    if (cpu < bestCpu) bestCpu = cpu;
    results = res;
  }
  out("js.passes", passes);
  out("js.seconds", best.toFixed(6));
  out("js.mbps", (inputBytes / best / 1e6).toFixed(2));
  out("js.cpu_mbps", (inputBytes / bestCpu / 1e6).toFixed(2));
  out("js.failed", results.filter((x) => x === null).length);

  // ---- untimed: agreement with agentwire
  const aw = fs
    .readFileSync(path.join(dir, "repair-aw.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
  if (aw.length !== docs.length) throw new Error(`repair-aw.jsonl has ${aw.length} lines for ${docs.length} documents`);
  const byKind = {};
  const tally = (kinds, what) => {
    for (const k of kinds) {
      byKind[k] ??= { docs: 0, agree: 0, disagree: 0, aw_only: 0, js_only: 0, neither: 0 };
      byKind[k].docs++;
      byKind[k][what]++;
    }
  };
  const totals = { agree: 0, disagree: 0, aw_only: 0, js_only: 0, neither: 0 };
  const report = [];
  const reasons = {};
  for (let i = 0; i < docs.length; i++) {
    let a = null;
    let j = null;
    if (aw[i] !== null) a = JSON.parse(aw[i]); // agentwire's output is always strict JSON (checked there)
    let jsOk = results[i] !== null;
    if (jsOk) {
      try {
        j = JSON.parse(results[i]);
      } catch (e) {
        jsOk = false; // jsonrepair returned text that is not JSON
      }
    }
    let what;
    if (aw[i] !== null && jsOk) what = same(a, j) ? "agree" : "disagree";
    else if (aw[i] !== null) what = "aw_only";
    else if (jsOk) what = "js_only";
    else what = "neither";
    totals[what]++;
    tally(docs[i].kinds, what);
    if (what === "disagree") {
      const why = explain(a, j, docs[i].kinds);
      reasons[why] = (reasons[why] || 0) + 1;
      report.push(
        `#${i} kinds: ${docs[i].kinds.join(", ")}; why: ${why}\n  input:      ${JSON.stringify(docs[i].text)}\n` +
          `  agentwire:  ${JSON.stringify(a)}\n  jsonrepair: ${JSON.stringify(j)}\n`,
      );
    }
  }
  fs.writeFileSync(path.join(dir, "repair-disagreements.txt"), report.join(""));
  for (const r of report.slice(0, 5)) process.stderr.write(`repair_peer: disagreement ${r}`);
  if (report.length > 5) process.stderr.write(`repair_peer: ... ${report.length - 5} more in ${path.join(dir, "repair-disagreements.txt")}\n`);
  for (const [k, v] of Object.entries(totals)) out(`cmp.${k}`, v);
  for (const [k, v] of Object.entries(reasons)) out(`cmp.why.${k}`, v);
  for (const [k, v] of Object.entries(byKind)) for (const [w, n] of Object.entries(v)) out(`cmp.kind.${k}.${w}`, n);
}

main();
