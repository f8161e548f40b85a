#!/usr/bin/env node
"use strict";
// Writes tests/vectors/json/writer.jsonl: the writer's parity vectors.
//
//   node tests/vectors/json/gen_writer_vectors.js [OUT]
//
// Each line is one vector:
//   {"name": ..., "input": JSON text,
//    "compact": JSON.stringify(JSON.parse(input)),
//    "indent2": JSON.stringify(JSON.parse(input), null, 2),
//    "indent4": JSON.stringify(JSON.parse(input), null, 4)}
// tests/test_json_write.c parses every input with aw_json_parse and checks
// aw_json_write gives the three outputs byte for byte. The inputs are JSON
// texts as a strict reader accepts them: lone surrogates appear only as
// \uXXXX escapes (a raw one is not UTF-8), controls only escaped.
//
// The output is deterministic (a seeded PRNG, no clock, no Math.random), so
// running this again gives the same file; the file is committed and the C
// test does not need node. Re-run after changing the generator, and check
// the diff.
const fs = require("fs");
const path = require("path");

const OUT = process.argv[2] || path.join(__dirname, "writer.jsonl");

// ---- seeded PRNG (mulberry32) ---------------------------------------------------
let seed = 0x5eed2026 >>> 0;
function rand() {
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

// ---- doubles from bits ----------------------------------------------------------
const dv = new DataView(new ArrayBuffer(8));
function fromBits(hi, lo) {
  dv.setUint32(0, hi >>> 0);
  dv.setUint32(4, lo >>> 0);
  return dv.getFloat64(0);
}
function bitsOf(d) {
  dv.setFloat64(0, d);
  return [dv.getUint32(0), dv.getUint32(4)];
}
// the next double up / down (d finite, positive)
function nextUp(d) {
  let [hi, lo] = bitsOf(d);
  lo = (lo + 1) >>> 0;
  if (lo === 0) hi = (hi + 1) >>> 0;
  return fromBits(hi, lo);
}
function nextDown(d) {
  let [hi, lo] = bitsOf(d);
  if (lo === 0) hi = (hi - 1) >>> 0;
  lo = (lo - 1) >>> 0;
  return fromBits(hi, lo);
}
function randomFiniteDouble() {
  for (;;) {
    const d = fromBits(u32(), u32());
    if (Number.isFinite(d)) return d;
  }
}
function randomSubnormal() {
  return fromBits((chance(0.5) ? 0x80000000 : 0) | rnd(0x100000), u32());
}

// ---- number texts -----------------------------------------------------------------
// A JSON number text that JSON.parse reads as d (finite). JavaScript's own
// String(d) is valid JSON ("1e+21", "5e-324"); other spellings exercise the
// reader's conversion too.
function numberText(d) {
  const s = String(d);
  const r = rand();
  let t = s;
  if (r < 0.55) t = s;
  else if (r < 0.7) t = d.toExponential(16 + rnd(5)); // 17..21 significant digits
  else if (r < 0.8) t = d.toPrecision(17);
  else if (r < 0.9 && Math.abs(d) < 1e21) t = d.toFixed(Math.min(100, 6 + rnd(30)));
  else t = s.toUpperCase().replace("+", chance(0.5) ? "+" : ""); // 1E21, 5E-324
  if (Object.is(d, -0) && !t.startsWith("-")) t = "-" + t;
  // too few decimals to come back as d (toFixed of a tiny number): use String(d)
  if (!Object.is(JSON.parse(t), d)) t = Object.is(d, -0) ? "-0" : s;
  return t;
}
// A digit string of 1 to 31 significant digits with an optional fraction and
// exponent, as JSON spells numbers (the reader must round it as V8 does).
function digitsText() {
  let m = String(1 + rnd(9));
  const nd = rnd(31);
  for (let i = 0; i < nd; i++) m += String(rnd(10));
  let t = m;
  if (chance(0.5)) {
    const cut = 1 + rnd(m.length);
    t = m.slice(0, cut) + "." + (cut < m.length ? m.slice(cut) : "0");
  } else if (chance(0.2)) {
    t = "0." + "0".repeat(rnd(10)) + m;
  }
  if (chance(0.6)) t += pick(["e", "E"]) + pick(["", "+", "-"]) + String(rnd(340));
  return (chance(0.3) ? "-" : "") + t;
}
// A random number as text, as a model or a program might write it.
function randomNumberText() {
  const r = rand();
  if (r < 0.25) return String(rnd(1000) - (chance(0.3) ? 500 : 0));
  if (r < 0.4) return numberText((rnd(2000000) - 1000000) / Math.pow(10, rnd(7)));
  if (r < 0.55) return numberText(randomFiniteDouble());
  if (r < 0.6) return numberText(randomSubnormal());
  if (r < 0.7) return digitsText();
  if (r < 0.8) return (chance(0.2) ? "-" : "") + (9007199254740992n + BigInt(rnd(64) - 32)).toString();
  if (r < 0.85) return pick(["0", "-0", "0.0", "-0.0", "0e0", "0E+5", "-0e-5", "1e400", "-1e400", "1e-400", "-1e-400"]);
  if (r < 0.9) return numberText((rnd(1 << 30) + 1) * Math.pow(2, rnd(200) - 100));
  return numberText(Number("1e" + (rnd(60) - 30)) * (chance(0.5) ? 1 : 3));
}

// ---- strings ----------------------------------------------------------------------------
const hex4 = (c) => c.toString(16).padStart(4, "0");
// The JSON text of a string value: every code unit that must be escaped is,
// the rest randomly raw or escaped (\uXXXX in either case, \/, the short forms).
function stringText(s, escapeRate) {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const hi = c >= 0xd800 && c <= 0xdbff;
    const lo = c >= 0xdc00 && c <= 0xdfff;
    const pairHere = hi && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
    const esc = (u) => {
      const h = hex4(u);
      return "\\u" + (chance(0.3) ? h.toUpperCase() : h);
    };
    if (pairHere) {
      // raw astral character, or the escaped pair
      if (chance(escapeRate)) out += esc(c) + esc(s.charCodeAt(i + 1));
      else out += s[i] + s[i + 1];
      i++;
      continue;
    }
    if (hi || lo) {
      out += esc(c); // a lone surrogate can only be written escaped
      continue;
    }
    const short = { 0x22: '\\"', 0x5c: "\\\\", 0x08: "\\b", 0x0c: "\\f", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t" }[c];
    if (c === 0x22 || c === 0x5c || c < 0x20) {
      out += short && chance(0.7) ? short : esc(c);
    } else if (c === 0x2f && chance(escapeRate)) {
      out += "\\/";
    } else if (chance(escapeRate)) {
      out += esc(c);
    } else {
      out += s[i];
    }
  }
  return out + '"';
}

const ASTRAL = ["\u{1F600}", "\u{1F4A9}", "\u{10000}", "\u{10FFFF}", "\u{1D11E}", "\u{20000}", "\u{1F1EB}\u{1F1F7}",
  "\u{1F468}\u200d\u{1F469}\u200d\u{1F467}", "\u{E0001}"];
const LONE = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"];
function randomChar() {
  const r = rand();
  if (r < 0.45) return String.fromCharCode(0x20 + rnd(0x5f)); // printable ASCII
  if (r < 0.52) return String.fromCharCode(rnd(0x20)); // controls
  if (r < 0.55) return pick(['"', "\\", "/", "\u007f"]);
  if (r < 0.62) return String.fromCharCode(0x80 + rnd(0x780)); // 2-byte UTF-8
  if (r < 0.72) {
    let c;
    do c = 0x800 + rnd(0x10000 - 0x800);
    while (c >= 0xd800 && c <= 0xdfff);
    return String.fromCharCode(c); // 3-byte
  }
  if (r < 0.76) return pick(["\u2028", "\u2029", "\ufeff", "\ufffd", "\ufffe", "\uffff", "\u00a0", "\u0085"]);
  if (r < 0.86) return chance(0.5) ? pick(ASTRAL) : String.fromCodePoint(0x10000 + rnd(0x100000));
  if (r < 0.95) return pick(LONE);
  return String.fromCharCode(0xdc00 + rnd(0x400)) + String.fromCharCode(0xd800 + rnd(0x400)); // reversed pair
}
function randomString(maxLen) {
  const n = rnd(maxLen + 1);
  let s = "";
  if (chance(0.3)) {
    // mostly plain words
    for (let i = 0; i < n; i++) s += chance(0.9) ? pick(["a", "b", "hello", " ", "x_y", "42", "-"]) : randomChar();
    return s;
  }
  for (let i = 0; i < n; i++) s += randomChar();
  return s;
}

const INDEX_KEYS = ["0", "1", "2", "10", "9", "100", "4294967294", "4294967295", "4294967296", "01", "-1", "1.0",
  "1e3", "", " 1", "1 ", "+1", "007", "2147483648", "99999999999"];
function randomKey() {
  const r = rand();
  if (r < 0.35) return pick(INDEX_KEYS);
  if (r < 0.7) return pick(["a", "b", "id", "name", "type", "__proto__", "constructor", "toString", "z", "key"]);
  if (r < 0.8) return String(rnd(50));
  return randomString(6);
}

// ---- random documents as JSON text -------------------------------------------------
// Written directly as text, so whitespace, escapes, number spellings and
// duplicate keys vary in ways JSON.stringify never writes.
function ws(style) {
  if (style.compact || !chance(style.wsRate)) return "";
  let s = "";
  const n = 1 + rnd(3);
  for (let i = 0; i < n; i++) s += pick(style.ws);
  return s;
}
function randomValueText(depth, style) {
  const r = rand();
  const leaf = depth >= style.maxDepth || r < style.leafRate;
  if (leaf) {
    const k = rand();
    if (k < 0.1) return pick(["null", "true", "false"]);
    if (k < 0.5) return randomNumberText();
    return stringText(randomString(style.strLen), style.escapeRate);
  }
  const n = chance(style.emptyRate) ? 0 : 1 + rnd(style.width);
  if (chance(0.5)) {
    const items = [];
    for (let i = 0; i < n; i++) items.push(ws(style) + randomValueText(depth + 1, style) + ws(style));
    return "[" + (n ? items.join(",") : ws(style)) + "]";
  }
  const keys = [];
  const members = [];
  for (let i = 0; i < n; i++) {
    // duplicate keys: reuse one of this object's keys now and then
    const key = keys.length && chance(0.12) ? pick(keys) : randomKey();
    keys.push(key);
    members.push(ws(style) + stringText(key, style.escapeRate) + ws(style) + ":" + ws(style) +
      randomValueText(depth + 1, style) + ws(style));
  }
  return "{" + (n ? members.join(",") : ws(style)) + "}";
}
function randomDocText(opts) {
  const style = Object.assign({
    maxDepth: 1 + rnd(6),
    leafRate: 0.45,
    emptyRate: 0.15,
    width: 1 + rnd(6),
    strLen: rnd(12),
    escapeRate: pick([0, 0.05, 0.3]),
    wsRate: pick([0, 0.2, 0.6]),
    ws: [" ", "\t", "\n", "\r\n", "  "],
    compact: false,
  }, opts || {});
  return ws(style) + randomValueText(0, style) + ws(style);
}

// ---- the vectors --------------------------------------------------------------------------
const vectors = [];
const names = new Set();
function add(name, input) {
  if (names.has(name)) throw new Error("duplicate vector name " + name);
  names.add(name);
  const v = JSON.parse(input);
  vectors.push({
    name,
    input,
    compact: JSON.stringify(v),
    indent2: JSON.stringify(v, null, 2),
    indent4: JSON.stringify(v, null, 4),
  });
}

// Numbers that are hard to print.
const HARD_NUMBERS = [
  "5e-324", "-5e-324", "1e-323", "2.2250738585072014e-308", "2.225073858507201e-308", "4.9406564584124654e-324",
  "1.7976931348623157e308", "-1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
  "0.1", "0.2", "0.30000000000000004", "0.3", "1e21", "1e+21", "999999999999999900000", "999999999999999999999",
  "100000000000000000000", "1e20", "123456789012345680000", "123456789012345678901", "1.5e300", "1e-7", "1e-6",
  "0.000001", "0.0000001", "1.5e-7", "0.00000015", "1.2345e-7", "9007199254740991", "9007199254740992",
  "9007199254740993", "9007199254740994", "9007199254740995", "-9007199254740993", "18014398509481985",
  "9223372036854775807", "-9223372036854775808", "18446744073709551615", "18446744073709551616",
  "123456789012345678901234567890", "1.2345678901234568e+29", "-0", "-0.0", "0", "0.0", "-0e10", "0e-10", "1E2",
  "1e0", "1.0", "100", "1e2", "12.50", "1.25e1", "4.35", "2.675", "1.005", "0.1e1", "10e-1", "1e400", "-1e400",
  "1e-400", "-1e-400", "1e309", "123e-20", "0.5", "2e-7", "1.7976931348623157e-308", "3.141592653589793",
  "2.718281828459045", "1.1", "1234567.1", "5e-7", "1.0000000000000002", "0.9999999999999999", "4503599627370496.5",
  "4503599627370497.5", "1125899906842624.125", "1125899906842623.9", "0.000123", "1e15", "1e16", "1e17",
  "12345678901234567", "1.2e-5", "8.41e21", "5e-310", "2.4703282292062328e-324", "2.4703282292062327e-324",
  "9.8813129168249309e-324", "1.4821969375237396e-323", "6.103515625e-5", "1e23", "8.589973e9", "1.448997445238699",
  "7.0e-10", "9.5e-5", "0.000095", "33554432.5", "2.5e-8", "1.7e308",
];
for (const t of HARD_NUMBERS) {
  add("number/" + t, t);
  add("number-in-array/" + t, "[" + t + ", -" + t.replace(/^-/, "") + "]");
}

// Powers of two and their neighbours: the shortest form of a double at a
// power of two has an asymmetric rounding interval.
for (let e = -1074; e <= 1023; e += 1) {
  if (e % 64 !== 0 && e !== -1074 && e !== 1023) continue;
  const items = [];
  for (let k = e; k < Math.min(e + 64, 1024); k++) {
    const d = Math.pow(2, k);
    items.push(String(d));
    if (k % 4 === 0) items.push(String(nextUp(d)));
    if (k % 4 === 0 && k > -1074) items.push(String(nextDown(d)));
  }
  add("powers-of-two/" + e, "[" + items.join(",") + "]");
}
// Powers of ten and their neighbours.
for (let e = -323; e <= 308; e += 20) {
  const items = [];
  for (let k = e; k < Math.min(e + 20, 309); k++) {
    const d = Number("1e" + k);
    items.push("1e" + k, String(nextUp(d)), String(nextDown(d)));
  }
  add("powers-of-ten/" + e, "[" + items.join(",") + "]");
}
// Around the notation switches: 1e21, 1e-6 / 1e-7, and the 2^50, 2^53 edges
// the C formatter's fast paths care about.
for (const base of [1e21, 1e-6, 1e-7, Math.pow(2, 50), Math.pow(2, 53), 1e15, 1e16, 1e17]) {
  const items = [];
  let up = base, down = base;
  for (let i = 0; i < 20; i++) {
    items.push(String(up), String(down));
    up = nextUp(up);
    down = nextDown(down);
  }
  add("edge/" + String(base), "[" + items.join(",") + "]");
}

// Single random doubles of several kinds.
for (let i = 0; i < 250; i++) add("double-bits/" + i, numberText(randomFiniteDouble()));
for (let i = 0; i < 60; i++) add("double-subnormal/" + i, numberText(randomSubnormal()));
for (let i = 0; i < 60; i++) {
  const d = 9007199254740992 * (1 + rnd(2048)) + (rnd(1 << 20) - (1 << 19));
  add("double-near-2^53/" + i, chance(0.5) ? numberText(d) : BigInt.asIntN(64, BigInt(d) + BigInt(rnd(5) - 2)).toString());
}
for (let i = 0; i < 100; i++) {
  const d = (rnd(2) ? -1 : 1) * rnd(1e9) / Math.pow(10, rnd(16));
  add("double-decimal/" + i, numberText(d));
}
for (let i = 0; i < 60; i++) {
  const d = Number("0." + String(u32()).padStart(10, "0") + String(u32())) * Math.pow(10, rnd(40) - 20);
  add("double-digits/" + i, numberText(d));
}
// Arrays of random number texts (rounding of long inputs, odd spellings).
for (let i = 0; i < 60; i++) {
  const items = [];
  for (let k = 0; k < 20; k++) items.push(randomNumberText());
  add("number-texts/" + i, "[" + items.join(",") + "]");
}

// Strings: every escape, every control character, the characters that are
// easy to get wrong.
add("string/short-escapes", '"\\"\\\\\\/\\b\\f\\n\\r\\t"');
for (let c = 0; c < 0x20; c++) {
  add("string/control-" + c, '"a\\u' + hex4(c) + 'b"');
  add("string/control-upper-" + c, '["\\u' + hex4(c).toUpperCase() + '", {"\\u' + hex4(c) + '": 1}]');
}
{
  let all = '"';
  for (let c = 0; c < 0x20; c++) all += "\\u" + hex4(c);
  add("string/all-controls", all + '"');
  let ascii = "";
  for (let c = 0x20; c < 0x80; c++) ascii += String.fromCharCode(c);
  add("string/all-ascii", JSON.stringify(ascii));
  add("string/all-ascii-escaped", stringText(ascii, 1));
}
add("string/del", '"\u007f\\u007f"');
add("string/u2028-u2029-raw", '"\u2028\u2029"');
add("string/u2028-u2029-escaped", '"\\u2028\\u2029"');
add("string/bom-nonchars", '"\ufeff\\ufeff\ufffe\uffff\\uFFFF"');
add("string/latin1", '"caf\u00e9 \u00ff \u0080 \\u00e9"');
add("string/cjk", '"\u65e5\u672c\u8a9e \\u65e5"');
add("string/emoji-raw", '"\u{1F600}\u{1F4A9}\u{10FFFF}\u{10000}"');
add("string/emoji-escaped", '"\\ud83d\\ude00\\uD83D\\uDCA9\\udbff\\udfff\\ud800\\udc00"');
add("string/emoji-zwj", '"\u{1F468}\u200d\u{1F469}\u200d\u{1F467} \u{1F1EB}\u{1F1F7}"');
add("string/lone-high", '"\\ud800"');
add("string/lone-low", '"\\udfff"');
add("string/lone-high-end", '"abc\\udbff"');
add("string/lone-low-start", '"\\udc00abc"');
add("string/reversed-pair", '"\\ude00\\ud83d"');
add("string/high-high-low", '"\\ud83d\\ud83d\\ude00"');
add("string/high-low-low", '"\\ud83d\\ude00\\ude00"');
add("string/high-then-raw-astral", '"\\ud800\u{1F600}"');
add("string/raw-astral-then-low", '"\u{1F600}\\udc00"');
add("string/high-then-escape", '"\\ud800\\n\\udc00"');
add("string/lone-in-key", '{"\\ud800": "\\udfff", "a\\udc00b": 1}');
add("string/empty", '""');
add("string/nul", '"\\u0000"');
add("string/nul-middle", '"a\\u0000b\\u0000"');
add("string/solidus", '"a/b\\/c"');
add("string/escaped-ascii", '"\\u0041\\u0062\\u007A"');
for (const n of [15, 16, 17, 31, 32, 33, 4095, 4096, 4097, 8193]) {
  // long strings: the writer copies in 16-byte vectors and 4 KiB blocks
  let s = "";
  while (s.length < n) s += "abcdefghijklmnopqrstuvwxyz0123456789".slice(0, 1 + rnd(36));
  s = s.slice(0, n);
  add("string/long-plain-" + n, JSON.stringify(s));
  const at = [n - 1, n - 2, n >> 1, 15, 16];
  let t = s.split("");
  for (const p of at) if (p >= 0 && p < t.length) t[p] = pick(['"', "\\", "\n", "\u0001", "\u00e9", "\u{1F600}", "\u2028", "\ud800"]);
  add("string/long-special-" + n, stringText(t.join(""), 0));
}

// Keys: array-index keys first (ascending), then insertion order.
const KEY_SETS = [
  ["10", "2", "a", "-1", "01", "4294967295", "4294967294", "1.0", ""],
  ["a", "", "1.0", "4294967294", "01", "-1", "4294967295", "2", "10"],
  ["4294967295", "4294967294", "0"],
  ["b", "1", "a", "0"],
  ["z", "y", "x"],
  ["2", "1", "0"],
  ["1", "01", "1 ", " 1", "+1", "1e0", "1.5", "0x1"],
  ["4294967296", "4294967293", "18446744073709551616", "2147483647", "2147483648"],
  ["00", "0", "000"],
  ["-0", "0", "-1"],
  ["9", "10", "99", "100", "1000000", "99999"],
  ["\u0661", "1", "\uff11"], // Arabic-Indic and full-width digits are not indices
  ["__proto__", "constructor", "1", "toString"],
];
KEY_SETS.forEach((keys, i) => {
  add("keys/" + i, "{" + keys.map((k, j) => JSON.stringify(k) + ":" + j).join(",") + "}");
  add("keys-reversed/" + i, "{" + keys.slice().reverse().map((k, j) => JSON.stringify(k) + ":" + j).join(",") + "}");
  add("keys-nested/" + i, '{"o":{' + keys.map((k, j) => JSON.stringify(k) + ":[" + j + "]").join(",") + '},"1":{}}');
});
// Duplicate keys: the last value at the place of the first.
add("dup/simple", '{"a":1,"b":2,"a":3}');
add("dup/three", '{"a":1,"a":2,"a":3}');
add("dup/index", '{"1":"x","0":"y","1":"z"}');
add("dup/mixed", '{"b":1,"10":2,"a":3,"b":4,"2":5,"10":6,"a":{"c":1,"c":[2]}}');
add("dup/empty-key", '{"":1,"x":2,"":3}');
add("dup/escaped-same", '{"a":1,"\\u0061":2}');
add("dup/value-types", '{"k":[1,2],"k":{"x":1},"k":null}');
add("dup/nested-object-values", '{"a":{"x":1,"y":2},"b":0,"a":{"y":3,"x":4,"y":5}}');
{
  // more than 16 members: objects of this size take another path
  const members = [];
  for (let i = 0; i < 40; i++) members.push(JSON.stringify("k" + (i % 23)) + ":" + i);
  add("dup/wide-40", "{" + members.join(",") + "}");
  const m2 = [];
  for (let i = 0; i < 60; i++) m2.push(JSON.stringify(String((i * 37) % 50)) + ":" + i);
  add("dup/wide-index-60", "{" + m2.join(",") + "}");
  const m3 = [];
  for (let i = 0; i < 100; i++) m3.push(JSON.stringify(i % 3 ? "key" + i : String(1000 - i)) + ":" + i);
  add("keys/wide-100", "{" + m3.join(",") + "}");
}

// Containers and indentation.
const SHAPES = [
  "[]", "{}", "[[]]", "[{}]", "{\"a\":[]}", "{\"a\":{}}", "[[],{},[[]],{\"a\":{}}]", "[[[[[]]]]]",
  "{\"a\":{\"b\":{\"c\":{\"d\":{}}}}}", "[1,[2,[3,[4]]]]", "[null,true,false]", "null", "true", "false",
  "  [ ]  ", " { } ", "\t\n[\r\n1 ,\t2 ]\n", "[{\"a\":[{\"b\":[]}],\"c\":{}}, [], {}]", "{\"\":{\"\":[\"\"]}}",
  "[\"\\n\", {\"\\n\": \"\\n\"}]", "[[],[[]],[[],[]]]", "{\"a\":[1,{\"b\":[]},2]}", "[0,-0,0.0,-0.0]",
  "{\"x\":[{},{},{}],\"y\":[[],[],[]]}",
];
SHAPES.forEach((s, i) => add("shape/" + i, s));
{
  let deep = "";
  for (let i = 0; i < 60; i++) deep += i % 2 ? '{"k":' : "[";
  deep += "0";
  for (let i = 59; i >= 0; i--) deep += i % 2 ? "}" : "]";
  add("shape/deep-60", deep);
  let deepEmpty = "";
  for (let i = 0; i < 40; i++) deepEmpty += i % 3 === 2 ? '{"":' : "[";
  deepEmpty += "[]";
  for (let i = 39; i >= 0; i--) deepEmpty += i % 3 === 2 ? "}" : "]";
  add("shape/deep-empty-40", deepEmpty);
  add("shape/wide-array", "[" + Array.from({ length: 300 }, (_, i) => String(i * 7)).join(",") + "]");
}
// Whitespace in every legal place, and scalars at the top level.
add("ws/all-places", " \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, \t\r\n2 \t\r\n] \t\r\n} \t\r\n");
add("ws/top-string", '  "x"  ');
add("ws/top-number", "\n-12.5e-3\n");

// Random documents of every shape: small and varied, deep and narrow, wide.
for (let i = 0; i < 260; i++) add("random-doc/" + i, randomDocText());
for (let i = 0; i < 20; i++) add("random-deep/" + i, randomDocText({ maxDepth: 10 + rnd(40), width: 1, leafRate: 0.02, emptyRate: 0.02 }));
for (let i = 0; i < 10; i++) add("random-bushy/" + i, randomDocText({ maxDepth: 8, width: 3, leafRate: 0.3 }));
for (let i = 0; i < 15; i++) add("random-wide/" + i, randomDocText({ maxDepth: 2, width: 20 + rnd(20), strLen: 4, leafRate: 0.4 }));
for (let i = 0; i < 40; i++) add("random-unicode/" + i, randomDocText({ maxDepth: 3, width: 4, strLen: 40, escapeRate: 0.5 }));

// The file: one vector per line, JSON.stringify's bytes (raw UTF-8, lone
// surrogates never occur outside escapes in these strings).
let text = "";
for (const v of vectors) text += JSON.stringify(v) + "\n";
fs.writeFileSync(OUT, text);
process.stderr.write(`${vectors.length} vectors, ${text.length} characters -> ${OUT}\n`);
