#!/usr/bin/env node
"use strict";
// Random JSON documents and what JavaScript prints for them, for
// tests/test_json_node.sh.
//
//   node random_docs.js DIR [COUNT [SEED]]
//
// Writes into DIR:
//   docs.jsonl      COUNT documents, one a line, as JSON text written with
//                   varied whitespace (spaces and tabs), escapes, number
//                   spellings and duplicate keys; some lines end in CRLF and
//                   blank lines come between some of them
//   docs_plain.txt  the same documents, one a line, no blank lines (to show a
//                   failing document by its number)
//   compact.jsonl   JSON.stringify(JSON.parse(doc)) for each, one a line
//   pretty.json     an array of every 25th document, and pretty{2,4,10}.txt:
//                   JSON.stringify(that array, null, N) and a newline
//   single/NNNNN-I.json and single/NNNNN-I.want: every 300th document, and
//                   JSON.stringify(doc, null, I) and a newline (I from 0 to 10
//                   in turn)
// Same COUNT and SEED, same files.
const fs = require("fs");
const path = require("path");

const [dir, countArg, seedArg] = process.argv.slice(2);
if (!dir) {
  console.error("usage: random_docs.js DIR [COUNT [SEED]]");
  process.exit(2);
}
const COUNT = Number(countArg || 10000);
let seed = Number(seedArg || 20260116) >>> 0;

function rand() { // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const rnd = (n) => Math.floor(rand() * n);
const chance = (p) => rand() < p;
const pick = (a) => a[rnd(a.length)];
const u32 = () => (rand() * 4294967296) >>> 0;

// ---- numbers --------------------------------------------------------------------
const dv = new DataView(new ArrayBuffer(8));
function fromBits(hi, lo) {
  dv.setUint32(0, hi >>> 0);
  dv.setUint32(4, lo >>> 0);
  return dv.getFloat64(0);
}
function finiteFromBits(hiMask, hiSet) {
  for (;;) {
    const d = fromBits((u32() & hiMask) | hiSet, u32());
    if (Number.isFinite(d)) return d;
  }
}
// d as JSON text, in one of several spellings that all read back as d
function spell(d) {
  const s = String(d);
  let t = s;
  const r = rand();
  if (r < 0.15) t = d.toExponential(16 + rnd(6));
  else if (r < 0.25) t = d.toPrecision(17 + rnd(4));
  else if (r < 0.3) t = s.toUpperCase();
  if (Object.is(d, -0)) t = "-" + t;
  return Object.is(JSON.parse(t), d) ? t : s;
}
function numberText() {
  const r = rand();
  if (r < 0.2) return String(rnd(100000) - 50000);
  if (r < 0.35) return spell((rnd(20000000) - 10000000) / Math.pow(10, rnd(9)));
  if (r < 0.5) return spell(finiteFromBits(0xffffffff, 0)); // any bit pattern
  if (r < 0.57) return spell(finiteFromBits(0x800fffff, 0)); // subnormal
  if (r < 0.62) return spell(finiteFromBits(0x801fffff, 0x7fc00000)); // near the top
  if (r < 0.67) return spell(finiteFromBits(0x800fffff, 0x00100000)); // smallest normals
  if (r < 0.72) return spell(Math.pow(2, rnd(2098) - 1074) * (chance(0.5) ? 1 : -1)); // powers of two
  if (r < 0.77) return (chance(0.3) ? "-" : "") + (9007199254740992n * BigInt(1 + rnd(3000)) + BigInt(rnd(200) - 100)).toString();
  if (r < 0.9) {
    // digits with any exponent: reading must round as V8 does
    let m = String(1 + rnd(9));
    const nd = rnd(40);
    for (let i = 0; i < nd; i++) m += String(rnd(10));
    let t = m;
    if (chance(0.5)) {
      const cut = 1 + rnd(m.length);
      t = m.slice(0, cut) + "." + (cut < m.length ? m.slice(cut) : "0");
    } else if (chance(0.2)) {
      t = "0." + "0".repeat(rnd(12)) + m;
    }
    if (chance(0.7)) t += pick(["e", "E"]) + pick(["", "+", "-"]) + String(rnd(420));
    return (chance(0.3) ? "-" : "") + t;
  }
  return pick(["0", "-0", "0.0", "-0.0", "0e0", "-0E-0", "1e21", "1e-7", "1e-6", "1e400", "-1e400", "1e-400",
    "5e-324", "1.7976931348623157e308", "0.1", "0.30000000000000004", "123456789012345680000", "9007199254740993",
    "999999999999999999999", "1e20", "0.000001", "1.5e-7"]);
}

// ---- strings --------------------------------------------------------------------
const hex4 = (c) => {
  const h = c.toString(16).padStart(4, "0");
  return chance(0.3) ? h.toUpperCase() : h;
};
function randomUnit() {
  const r = rand();
  if (r < 0.4) return String.fromCharCode(0x20 + rnd(0x5f));
  if (r < 0.48) return String.fromCharCode(rnd(0x20));
  if (r < 0.52) return pick(['"', "\\", "/", "\u007f", "\u2028", "\u2029", "\ufeff", "\uffff", "\ufffe"]);
  if (r < 0.6) return String.fromCharCode(0x80 + rnd(0x780));
  if (r < 0.72) {
    let c;
    do c = 0x800 + rnd(0xf800);
    while (c >= 0xd800 && c <= 0xdfff);
    return String.fromCharCode(c);
  }
  if (r < 0.85) return String.fromCodePoint(0x10000 + rnd(0x100000));
  if (r < 0.95) return String.fromCharCode(0xd800 + rnd(0x800)); // a lone surrogate (or half of a pair)
  return String.fromCharCode(0xdc00 + rnd(0x400), 0xd800 + rnd(0x400)); // reversed pair
}
function randomString(max) {
  const n = rnd(max + 1);
  let s = "";
  if (chance(0.35)) {
    for (let i = 0; i < n; i++) s += pick(["a", "bc", " ", "hello", "0", "_", "é", "日本", "😀"]);
    return s;
  }
  for (let i = 0; i < n; i++) s += randomUnit();
  return s;
}
// JSON text of s; code units that must be escaped are, others at random
// (a surrogate not in a pair is always escaped: raw it would not be UTF-8).
function stringText(s, rate) {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += chance(rate) ? "\\u" + hex4(c) + "\\u" + hex4(next) : s[i] + s[i + 1];
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += "\\u" + hex4(c);
    } else if (c === 0x22 || c === 0x5c || c < 0x20) {
      const short = { 0x22: '\\"', 0x5c: "\\\\", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t" }[c];
      out += short && chance(0.8) ? short : "\\u" + hex4(c);
    } else if (chance(rate)) {
      out += c === 0x2f && chance(0.5) ? "\\/" : "\\u" + hex4(c);
    } else {
      out += s[i];
    }
  }
  return out + '"';
}

// ---- documents ------------------------------------------------------------------
const KEYS = ["0", "1", "2", "9", "10", "11", "100", "4294967294", "4294967295", "4294967296", "01", "-1", "1.0",
  "", " ", "a", "b", "id", "name", "__proto__", "constructor", "length", "x", "y"];
function key() {
  const r = rand();
  if (r < 0.55) return pick(KEYS);
  if (r < 0.75) return String(rnd(r < 0.65 ? 20 : 5000000000));
  return randomString(8);
}
function ws(st) {
  if (!chance(st.ws)) return "";
  return pick([" ", "\t", "  ", " \t "]);
}
function value(depth, st) {
  // (the root of a wide document is always a container)
  if (depth >= st.depth || (!(depth === 0 && st.width0) && chance(st.leaf))) {
    const r = rand();
    if (r < 0.08) return pick(["null", "true", "false"]);
    if (r < 0.5) return numberText();
    return stringText(randomString(st.str), st.esc);
  }
  const n = chance(0.1) ? 0 : 1 + rnd(depth === 0 && st.width0 ? st.width0 : st.width);
  if (chance(0.45)) {
    const items = [];
    for (let i = 0; i < n; i++) items.push(ws(st) + value(depth + 1, st) + ws(st));
    return "[" + (n ? items.join(",") : ws(st)) + "]";
  }
  const used = [];
  const members = [];
  for (let i = 0; i < n; i++) {
    const k = used.length && chance(0.15) ? pick(used) : key(); // duplicate keys
    used.push(k);
    members.push(ws(st) + stringText(k, st.esc) + ws(st) + ":" + ws(st) + value(depth + 1, st) + ws(st));
  }
  return "{" + (n ? members.join(",") : ws(st)) + "}";
}
function doc(i) {
  const kind = rand();
  let st;
  if (kind < 0.6) st = { depth: 1 + rnd(5), width: 1 + rnd(6), leaf: 0.35, str: rnd(16), esc: pick([0, 0.1, 0.4]), ws: pick([0, 0.3]) };
  else if (kind < 0.75) st = { depth: 20 + rnd(150), width: 1, leaf: 0.01, str: 6, esc: 0.1, ws: 0.1 }; // deep
  else if (kind < 0.85) st = { depth: 2, width0: 30 + rnd(120), width: 8, leaf: 0.4, str: 8, esc: 0.1, ws: 0.1 }; // wide
  else if (kind < 0.95) st = { depth: 3, width: 5, leaf: 0.3, str: 60, esc: 0.3, ws: 0.2 }; // string-heavy
  else st = { depth: 6, width: 4, leaf: 0.2, str: 10, esc: 0.2, ws: 0.2 }; // bushy
  if (i % 2000 === 1999) st = { depth: 2, width0: 6000, width: 4, leaf: 0.5, str: 40, esc: 0.1, ws: 0.1 }; // lines > 64 KiB
  // the root of a wide document is a container
  return ws(st) + value(0, st) + ws(st);
}

fs.mkdirSync(path.join(dir, "single"), { recursive: true });
const lines = [], plain = [], compact = [], prettySet = [];
let singles = 0;
for (let i = 0; i < COUNT; i++) {
  const text = doc(i);
  const v = JSON.parse(text);
  plain.push(text);
  compact.push(JSON.stringify(v));
  if (chance(0.03)) lines.push(pick(["", " ", "\t", "  \t"]));
  lines.push(text + (chance(0.05) ? "\r" : ""));
  if (i % 25 === 0) prettySet.push(v);
  if (i % 300 === 7) {
    const n = singles++ % 11;
    const name = String(i).padStart(5, "0") + "-" + n;
    fs.writeFileSync(path.join(dir, "single", name + ".json"), text);
    fs.writeFileSync(path.join(dir, "single", name + ".want"), JSON.stringify(v, null, n) + "\n");
  }
}
fs.writeFileSync(path.join(dir, "docs.jsonl"), lines.join("\n") + "\n");
fs.writeFileSync(path.join(dir, "docs_plain.txt"), plain.join("\n") + "\n");
fs.writeFileSync(path.join(dir, "compact.jsonl"), compact.join("\n") + "\n");
// the array of every 25th document, written by node compact, read back by agentwire
fs.writeFileSync(path.join(dir, "pretty.json"), "[" + plain.filter((_, i) => i % 25 === 0).join(",\n") + "]");
for (const n of [2, 4, 10]) fs.writeFileSync(path.join(dir, "pretty" + n + ".txt"), JSON.stringify(prettySet, null, n) + "\n");
