#!/usr/bin/env node
// json_peer.js: the JavaScript side of the JSON benchmark (issue 2).
//
//   node json_peer.js CORPUS.jsonl AW_OUT.jsonl
//
// The same measurements as bench/bench_json.c, with Node's built-ins: the
// corpus is read and split into lines untimed (it is then already a
// decoded JS string, which favours the peer), then, best of 5 each:
//
// 1. parse: JSON.parse of every line, each value looked at (its "seq") and
//    dropped, as agentwire frees each document; MB/s of input bytes (the
//    whole file, newlines included);
// 2. parse_keep: JSON.parse of every line, all values kept in an array
//    (mostly a measure of how fast the heap grows, as on agentwire's side);
// 3. stringify: JSON.stringify of every value kept by 2, each string's
//    length summed and the string dropped; MB/s of output bytes (UTF-8,
//    plus one "\n" per value, as agentwire writes them).
//
// Then, untimed, checks that its output (the strings joined with "\n", and
// a last "\n") is byte for byte what aw_json_write produced (AW_OUT.jsonl,
// written by bench_json). Prints "key value" lines (bench/run_json.sh joins
// them with agentwire's). Times come from process.hrtime.bigint(); MB is
// 10^6 bytes. No npm dependencies.
"use strict";
const fs = require("fs");

const REPS = 5;
const now = () => process.hrtime.bigint();
const seconds = (t0, t1) => Number(t1 - t0) / 1e9;

function sameBytes(mine, path) {
  const theirs = fs.readFileSync(path);
  if (mine.equals(theirs)) return true;
  let i = 0;
  while (i < mine.length && i < theirs.length && mine[i] === theirs[i]) i++;
  let line = 1;
  for (let k = 0; k < i; k++) if (mine[k] === 10) line++;
  process.stderr.write(
    `json_peer: outputs differ at byte ${i}, output line ${line} (JSON.stringify ${mine.length} bytes, agentwire ${theirs.length})\n` +
      `  JSON.stringify: ${JSON.stringify(mine.subarray(Math.max(0, i - 80), i + 80).toString())}\n` +
      `  agentwire:      ${JSON.stringify(theirs.subarray(Math.max(0, i - 80), i + 80).toString())}\n`,
  );
  return false;
}

function main() {
  const [corpusPath, awPath] = process.argv.slice(2);
  if (!awPath) {
    process.stderr.write("usage: node json_peer.js CORPUS.jsonl AW_OUT.jsonl\n");
    process.exit(2);
  }
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  out("node.version", process.version);
  const inputBytes = fs.statSync(corpusPath).size;
  const lines = fs
    .readFileSync(corpusPath, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const n = lines.length;
  out("js.lines", n);

  // 1. JSON.parse of every line, each value dropped
  let best = Infinity;
  let check = 0;
  for (let r = 0; r < REPS; r++) {
    const t0 = now();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += JSON.parse(lines[i]).seq;
    const t = seconds(t0, now());
    check += sum;
    if (t < best) best = t;
  }
  out("js.parse.seconds", best.toFixed(6));
  out("js.parse.mbps", (inputBytes / best / 1e6).toFixed(1));
  out("js.parse.check", check);

  // 2. JSON.parse of every line, all values kept
  best = Infinity;
  let values = null;
  for (let r = 0; r < REPS; r++) {
    values = null; // the last round's values are garbage now
    const t0 = now();
    const v = new Array(n);
    for (let i = 0; i < n; i++) v[i] = JSON.parse(lines[i]);
    const t = seconds(t0, now());
    values = v;
    if (t < best) best = t;
  }
  out("js.parse_keep.seconds", best.toFixed(6));
  out("js.parse_keep.mbps", (inputBytes / best / 1e6).toFixed(1));

  // 3. JSON.stringify of every value
  best = Infinity;
  for (let r = 0; r < REPS; r++) {
    const t0 = now();
    let chars = 0;
    for (let i = 0; i < n; i++) chars += JSON.stringify(values[i]).length;
    const t = seconds(t0, now());
    check += chars;
    if (t < best) best = t;
  }
  const strings = values.map((v) => JSON.stringify(v));
  let outBytes = n; // the newlines
  for (const s of strings) outBytes += Buffer.byteLength(s, "utf8");
  out("js.write.out_bytes", outBytes);
  out("js.write.seconds", best.toFixed(6));
  out("js.write.mbps", (outBytes / best / 1e6).toFixed(1));

  // untimed: the same bytes as agentwire's writer?
  const mine = Buffer.from(strings.join("\n") + "\n", "utf8");
  out("identical.write", sameBytes(mine, awPath) ? "yes" : "no");
}

main();
