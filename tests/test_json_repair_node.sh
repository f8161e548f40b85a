#!/bin/sh
# `agentwire json repair` against the npm package jsonrepair, through the
# command, on a generated corpus of broken JSON.
#
#   tests/test_json_repair_node.sh [AGENTWIRE [SOURCE_DIR]]
#
# (or the environment variables AW_CLI, or AW_CLI_PATH, and AW_SOURCE_DIR, as
# ctest sets them). Needs node and SOURCE_DIR/bench/peers/node_modules/jsonrepair
# (`make bench` installs it); without them it prints "skipped: ..." and exits 0.
#
# Node generates AW_REPAIR_NODE_DOCS (default 300) documents from a fixed seed
# (AW_REPAIR_NODE_SEED), each broken in one to three of the ways the repairer
# handles (code fences, prose around the value, ... and …, single quotes,
# unquoted keys, trailing and missing commas, comments, Python literals and
# JavaScript-only numbers, raw control characters, invalid escapes, a cut-off
# end, missing colons and values) or left valid. Every document is repaired
# by `agentwire json repair --quiet FILE`, one run each, and by jsonrepair.
# Checks:
#   - the command exits 0 or 1, and whatever it prints on 0 is strict JSON;
#     valid documents come back byte for byte;
#   - where both succeed, JSON.parse of both results is the same value
#     (objects whatever their key order), except for the known differences
#     of design listed in ALLOWED below, each of which applies only to the
#     construct the generator wrote for it.
# Every disagreement is printed; the test fails on any that the allow-list
# does not explain. Takes a few seconds (under 60 s with the sanitizers).
set -u

CLI=${1:-${AW_CLI:-${AW_CLI_PATH:-}}}
SRC=${2:-${AW_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}}
SRC=$(cd "$SRC" 2>/dev/null && pwd) || { echo "no source directory: $SRC" >&2; exit 2; }
PKG=$SRC/bench/peers/node_modules/jsonrepair
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
    echo "usage: $0 AGENTWIRE [SOURCE_DIR]" >&2
    exit 2
fi
if ! command -v node >/dev/null 2>&1; then
    echo "skipped: node is not installed"
    exit 0
fi
if [ ! -f "$PKG/package.json" ]; then
    echo "skipped: $PKG is not installed (make bench installs it)"
    exit 0
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/aw-repair-node.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
mkdir "$T/in" "$T/aw"

# ---- 1. the corpus -------------------------------------------------------------
cat >"$T/gen.js" <<'EOF'
"use strict";
// Writes DIR/in/NNNN.json (the broken documents) and DIR/meta.jsonl (one
// line each: the kinds of breakage, and what the allow-list may excuse).
const fs = require("fs");
const [dir, count, seed] = process.argv.slice(2);

let s = Number(seed) >>> 0; // mulberry32
function rand() {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const rnd = (n) => Math.floor(rand() * n);
const chance = (p) => rand() * 100 < p;
const pick = (a) => a[rnd(a.length)];

const KINDS = ["fence", "prose", "ellipsis", "single_quotes", "unquoted_keys", "trailing_comma",
  "missing_comma", "comments", "python_literals", "control_chars", "invalid_escapes", "unclosed",
  "missing_colon", "missing_value"];
const WORDS = ["alpha", "beta gamma", "hello world", "search query", "path/to/file.txt", "a-b_c",
  "caf\u00e9", "\u65e5\u672c", "50% off", "C# code", "1 + 1 = 2", "line: two", "end.", "a,b",
  "{braces}", "[brackets]", "x < y", "R&D", "emoji \u{1F600}"];
const KEYS = ["name", "query", "id", "max_results", "path", "is_ok", "type", "k1", "args", "url",
  "content", "tags", "first_name"];
// Escapes JSON does not have: agentwire keeps the backslash, jsonrepair
// drops it (ALLOWED: invalid_escape).
const BAD_ESCAPES = ["C:\\Program Files\\App", "D:\\Users\\me", "\\d+ digits", "a \\q b"];
// Numbers JavaScript or Python write and JSON does not: agentwire reads the
// number (or null), jsonrepair keeps the text as a string (ALLOWED: js_number).
const ODD_NUMBERS = [["01", 1, "01"], ["007", 7, "007"], ["0x1F", 31, "0x1F"], ["NaN", null, "NaN"],
  ["Infinity", null, "Infinity"], ["-Infinity", null, "-Infinity"]];

function doc() {
  const kinds = new Set();
  if (!chance(6)) {
    const n = 1 + rnd(3);
    for (let i = 0; i < n; i++) kinds.add(pick(KINDS));
  }
  const has = (k) => kinds.has(k);
  const meta = { pairs: [], unicodeEllipsis: false, truncated: false, badEscapes: false };
  let out = "";
  const ws = () => {
    if (has("comments") && chance(12)) out += chance(50) ? " // a note\n" : " /* note */ ";
    else if (chance(25)) out += pick([" ", "\n  "]);
  };
  const str = () => {
    if (has("invalid_escapes") && chance(20)) {
      const raw = pick(BAD_ESCAPES);
      out += `"${raw}"`;
      meta.pairs.push({ aw: raw, js: raw.replace(/\\/g, "") });
      meta.badEscapes = true;
      return;
    }
    const w = pick(WORDS);
    if (has("single_quotes") && chance(50)) {
      out += `'${w}'`;
    } else if (has("control_chars") && chance(40) && w.includes(" ")) {
      out += `"${w.replace(" ", chance(50) ? "\n" : "\t")}"`;
    } else {
      out += JSON.stringify(w);
    }
  };
  const num = () => {
    if (has("python_literals") && chance(25)) {
      const [text, aw, js] = pick(ODD_NUMBERS);
      out += text;
      meta.pairs.push({ aw, js });
      return;
    }
    out += pick([String(rnd(1000)), String(-rnd(100000)), `${rnd(100)}.${1 + rnd(99)}`, `${1 + rnd(9)}e${rnd(12) - 6}`]);
  };
  const lit = () => {
    const w = rnd(3);
    out += has("python_literals") && chance(60) ? ["True", "False", "None"][w] : ["true", "false", "null"][w];
  };
  const sep = (last) => {
    if (last) {
      if (has("trailing_comma") && chance(50)) out += ",";
    } else if (has("missing_comma") && chance(40)) {
      out += "\n  ";
    } else {
      out += ",";
    }
  };
  let depth = 0;
  const value = () => {
    const k = rnd(100);
    if (depth < 3 && k < 14) obj();
    else if (depth < 3 && k < 28) arr();
    else if (k < 62) str();
    else if (k < 84) num();
    else lit();
  };
  function arr() {
    const n = 1 + rnd(5);
    out += "[";
    depth++;
    for (let i = 0; i < n; i++) {
      ws();
      value();
      sep(i + 1 === n && !has("ellipsis"));
    }
    if (has("ellipsis")) {
      if (chance(60)) out += " ...";
      else {
        out += " \u2026";
        meta.unicodeEllipsis = true;
      }
    }
    depth--;
    ws();
    out += "]";
  }
  function obj() {
    const n = 1 + rnd(depth ? 4 : 6);
    out += "{";
    depth++;
    const used = new Set();
    for (let i = 0; i < n; i++) {
      ws();
      // distinct keys: duplicate keys are a question of their own
      let k;
      do k = pick(KEYS); while (used.has(k) && used.size < KEYS.length);
      used.add(k);
      if (has("unquoted_keys") && chance(60)) out += k;
      else if (has("single_quotes") && chance(40)) out += `'${k}'`;
      else out += `"${k}"`;
      if (has("missing_colon") && chance(30)) {
        out += " ";
        meta.missingColon = true;
        value();
      } else if (has("missing_value") && chance(25)) {
        out += ":";
      } else {
        out += chance(70) ? ": " : ":";
        value();
      }
      sep(i + 1 === n);
    }
    depth--;
    ws();
    out += "}";
  }
  if (has("prose")) out += pick(["Sure! Here is the JSON:\n\n", "Calling the tool with ", ""]);
  if (has("fence")) out += pick(["```json\n", "```\n"]);
  if (chance(80)) obj();
  else arr();
  if (has("fence")) out += "\n```";
  if (has("prose")) out += pick(["\n\nLet me know if you need anything else.", " Hope this helps!", ""]);
  if (has("unclosed") && out.length > 4) {
    const cps = Array.from(out); // cut at a character boundary
    out = cps.slice(0, Math.floor(cps.length / 2) + rnd(Math.ceil(cps.length / 2))).join("");
    meta.truncated = true;
  }
  meta.kinds = [...kinds];
  return { text: out, meta };
}

const metas = [];
for (let i = 0; i < Number(count); i++) {
  const d = doc();
  fs.writeFileSync(`${dir}/in/${String(i).padStart(4, "0")}.json`, d.text);
  metas.push(JSON.stringify(d.meta));
}
fs.writeFileSync(`${dir}/meta.jsonl`, metas.join("\n") + "\n");
EOF
docs=${AW_REPAIR_NODE_DOCS:-300}
if ! node "$T/gen.js" "$T" "$docs" "${AW_REPAIR_NODE_SEED:-20240607}"; then
    echo "FAIL: the generator failed"
    exit 1
fi

# ---- 2. agentwire, one run per document (two at a time) ----------------------------
find "$T/in" -name '*.json' | sort | xargs -P 2 -n 25 sh -c '
    cli=$1 out=$2
    shift 2
    for f; do
        b=$(basename "$f" .json)
        "$cli" json repair --quiet "$f" >"$out/$b.json" 2>"$out/$b.err"
        echo $? >"$out/$b.rc"
    done' sh "$CLI" "$T/aw"

# ---- 3. jsonrepair, and the comparison ------------------------------------------------
cat >"$T/compare.js" <<'EOF'
"use strict";
const fs = require("fs");
const [dir, pkg] = process.argv.slice(2);
const { jsonrepair } = require(pkg);

// ALLOWED: the known differences of design between agentwire and jsonrepair.
// Each excuses a difference only where the generator wrote the construct it
// is about (meta says so), so anything else still fails.
//  - invalid_escape: "C:\Program Files": agentwire keeps the backslash of an
//    escape JSON does not have (the text is a Windows path or a regex more
//    often than not), jsonrepair drops it. Excused: the string agentwire gives
//    is the raw text and jsonrepair's the text without backslashes.
//  - js_number: 01, 007, 0x1F are numbers for agentwire (what JavaScript and
//    Python mean by them), strings for jsonrepair; NaN and +-Infinity are null
//    for agentwire (what JSON.stringify writes for them), strings for
//    jsonrepair. Excused: exactly those values.
//  - unicode_ellipsis: "…" where items would go means "and so on", as "..."
//    does, and agentwire drops it; jsonrepair keeps "…" as a string item.
//  - text_after_value: jsonrepair reads text before or after the value (prose,
//    or a fence cut short by the end) as more values of a newline-delimited
//    stream and returns them all in an array; agentwire keeps the one value.
//    Excused: jsonrepair's array holds agentwire's value and strings only.
//  - cut_tail: where the end of the text cut a value short, the two read
//    the last piece differently: a cut string keeps its trailing blanks here
//    (jsonrepair trims them), and one that ends in closers of the open
//    containers, as in ["a], ends before them here, while jsonrepair ends it
//    before the first character inside that looks like a delimiter ("[b] ->
//    "" and ["b"]); a number cut to its sign is "-" here, -0 there; 007 cut
//    to 00 is 0 here, "00" there. Excused in cut documents only: every leaf of
//    agentwire's value but the last is, in order and at the same path, a leaf
//    of jsonrepair's (which may have more after it).
//  - key_swallowed (a jsonrepair defect): after a newline, `"key" value`
//    with no colon makes jsonrepair read `key" value\n "next` as one key, so
//    its result has a key holding a quote. Excused only in documents with a
//    missing colon, and only when jsonrepair's result has such a key.
function sameValue(a, b) {
  if (a === b) return !(a === 0 && Object.is(a, -0) !== Object.is(b, -0));
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameValue(a[k], b[k]));
}

function excusedEqual(a, j, meta, used) {
  if (sameValue(a, j)) return true;
  for (const p of meta.pairs) {
    if (sameValue(a, p.aw) && sameValue(j, p.js)) {
      used.add(typeof p.aw === "string" ? "invalid_escape" : "js_number");
      return true;
    }
  }
  if (meta.truncated && meta.badEscapes && typeof a === "string" && typeof j === "string" &&
      a.replace(/\\/g, "") === j.replace(/\\/g, "")) {
    used.add("invalid_escape"); // a Windows path cut short: "C:\Prog
    return true;
  }
  if (typeof a !== "object" || typeof j !== "object" || a === null || j === null) return false;
  if (Array.isArray(a) !== Array.isArray(j)) return false;
  if (Array.isArray(a)) {
    let jj = j;
    if (meta.unicodeEllipsis && j.includes("\u2026") && !a.includes("\u2026")) {
      jj = j.filter((x) => x !== "\u2026");
      used.add("unicode_ellipsis");
    }
    return a.length === jj.length && a.every((x, i) => excusedEqual(x, jj[i], meta, used));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(j).length && ka.every((k) => Object.hasOwn(j, k) && excusedEqual(a[k], j[k], meta, used));
}

const hasQuotedKey = (v) =>
  v !== null && typeof v === "object" &&
  (Array.isArray(v) ? v.some(hasQuotedKey) : Object.keys(v).some((k) => k.includes('"') || hasQuotedKey(v[k])));

// The leaves of a value in document order, as [path, value]; empty
// containers count as leaves.
function leaves(v, path = "", out = []) {
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 0) out.push([path, v]);
    for (const k of keys) leaves(v[k], `${path}/${Array.isArray(v) ? k : JSON.stringify(k)}`, out);
  } else {
    out.push([path, v]);
  }
  return out;
}

function explain(a, j, meta, input) {
  const used = new Set();
  if (excusedEqual(a, j, meta, used)) return [...used];
  const textAround = meta.kinds.includes("prose") || meta.kinds.includes("fence") || meta.truncated;
  if (textAround && Array.isArray(j)) {
    for (let i = 0; i < j.length; i++) {
      const u2 = new Set(["text_after_value"]);
      if (j.every((x, k) => k === i || typeof x === "string") && excusedEqual(a, j[i], meta, u2)) return [...u2];
    }
  }
  if (meta.truncated) {
    const la = leaves(a), lj = leaves(j);
    const u2 = new Set(["cut_tail"]);
    if (la.length >= 1 && la.length - 1 <= lj.length &&
        la.slice(0, -1).every(([p, v], k) => p === lj[k][0] && excusedEqual(v, lj[k][1], meta, u2)))
      return [...u2];
  }
  if (meta.missingColon && hasQuotedKey(j)) return ["key_swallowed"];
  return null;
}

const metas = fs.readFileSync(`${dir}/meta.jsonl`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const tally = { agree: 0, allowed: 0, disagree: 0, aw_only: 0, js_only: 0, neither: 0, valid_ok: 0 };
const reasons = {};
let failures = 0;
const show = (x) => JSON.stringify(x);
for (let i = 0; i < metas.length; i++) {
  const id = String(i).padStart(4, "0");
  const meta = metas[i];
  const input = fs.readFileSync(`${dir}/in/${id}.json`, "utf8");
  const rc = fs.readFileSync(`${dir}/aw/${id}.rc`, "utf8").trim();
  const awText = fs.readFileSync(`${dir}/aw/${id}.json`, "utf8");
  let a;
  let awOk = false;
  if (rc === "0") {
    try {
      a = JSON.parse(awText);
      awOk = true;
    } catch (e) {
      console.log(`FAIL: #${id}: agentwire exited 0 but printed no strict JSON: ${show(awText)} (input ${show(input)})`);
      failures++;
    }
    if (meta.kinds.length === 0 && awText !== input + "\n") {
      console.log(`FAIL: #${id}: valid JSON did not come back as it was: ${show(awText)} (input ${show(input)})`);
      failures++;
    }
    if (meta.kinds.length === 0) tally.valid_ok++;
  } else if (rc !== "1") {
    console.log(`FAIL: #${id}: agentwire exited ${rc}: ${fs.readFileSync(`${dir}/aw/${id}.err`, "utf8")} (input ${show(input)})`);
    failures++;
    continue;
  }
  let j;
  let jsOk = false;
  try {
    j = JSON.parse(jsonrepair(input));
    jsOk = true;
  } catch (e) {
    jsOk = false;
  }
  if (!awOk || !jsOk) {
    tally[awOk ? "aw_only" : jsOk ? "js_only" : "neither"]++;
    continue;
  }
  if (sameValue(a, j)) {
    tally.agree++;
    continue;
  }
  const why = explain(a, j, meta, input);
  if (why) {
    tally.allowed++;
    for (const w of why) reasons[w] = (reasons[w] || 0) + 1;
    continue;
  }
  tally.disagree++;
  failures++;
  console.log(`FAIL: #${id} (${meta.kinds.join(", ") || "valid"}): agentwire and jsonrepair disagree\n` +
    `    input:      ${show(input)}\n    agentwire:  ${show(a)}\n    jsonrepair: ${show(j)}`);
}
console.log(`${metas.length} documents: ${tally.agree} agree, ${tally.allowed} differ as allowed ` +
  `(${Object.entries(reasons).map(([k, v]) => `${k} ${v}`).join(", ") || "none"}), ${tally.disagree} disagree; ` +
  `repaired by agentwire only ${tally.aw_only}, by jsonrepair only ${tally.js_only}, by neither ${tally.neither}; ` +
  `${tally.valid_ok} valid documents passed through`);
process.exit(failures ? 1 : 0);
EOF
if node "$T/compare.js" "$T" "$PKG"; then
    exit 0
fi
exit 1
