#!/usr/bin/env node
// contract_peer.js: the JavaScript side of the contract benchmark (issue 5).
//
//   node contract_peer.js DATA_DIR
//
// Parses and validates DATA_DIR/llmResponse-10KB.xml (written by
// bench/bench_contract.c) the way the seed's project does: npm
// fast-xml-parser configured as it was (ignoreAttributes: false,
// attributeNamePrefix: '', parseAttributeValue: true, trimValues: true),
// then the seed's ten response validation rules plus the (response
// not empty; subject name, description and isNew; keyword term and
// confidence from 0.0 to 1.0; isNew a boolean), written in JavaScript, ending
// in the same typed result agentwire returns ({"response", "analysis":
// {"subject": [...], "summaryUpdate"}}, subjects and keywords always
// arrays).
//
// Two measurements: "parse" (XMLParser.parse + the rules; fast-xml-parser
// does not check that the document is well-formed unless asked), and
// "checked" (XMLValidator.validate first, so that rule 1, "must be
// well-formed XML", holds as it does for agentwire). Each ITER documents in a
// row after a warm-up, 7 batches, the best batch's mean in µs per document.
// Untimed: the result must equal agentwire's (DATA_DIR/llmResponse-aw.json).
// Prints "key value" lines for bench/run_contract.sh. Times by the clock
// (process.hrtime.bigint()) and in CPU time of the process, all threads
// (process.cpuUsage()).
"use strict";
const fs = require("fs");
const { same } = require("./same_value.js");
const path = require("path");
const { XMLParser, XMLValidator } = require(path.join(__dirname, "node_modules", "fast-xml-parser"));

const ITER = 500;
const BATCHES = 7;

class ValidationError extends Error {}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: true,
  trimValues: true,
});

const asArray = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

// Text content of an element as fast-xml-parser gives it: a string, a
// number (parseTagValue), "" for an empty element, or an object with
// #text when it also has attributes.
function textOf(v, where) {
  if (v === undefined) throw new ValidationError(`${where}: missing`);
  if (Array.isArray(v)) throw new ValidationError(`${where}: must occur exactly once`);
  if (v !== null && typeof v === "object") {
    if (v["#text"] === undefined) return "";
    v = v["#text"];
  }
  return String(v);
}

function requireAttr(obj, name, where) {
  if (obj === null || typeof obj !== "object" || !(name in obj)) throw new ValidationError(`${where}: missing attribute ${name}`);
  return obj[name];
}

function parseLlmResponse(xml, checkWellFormed) {
  // Rule 1: well-formed XML
  if (checkWellFormed) {
    const ok = XMLValidator.validate(xml);
    if (ok !== true) throw new ValidationError(`malformed XML: ${ok.err.msg} (line ${ok.err.line})`);
  }
  const doc = parser.parse(xml);
  // Rule 2: root element
  const root = doc.llmResponse;
  if (root === undefined || Array.isArray(root)) throw new ValidationError("root element must be <llmResponse>");
  // Rule 3: exactly one non-empty <response>
  const response = textOf(root.response, "/llmResponse/response");
  if (response.trim() === "") throw new ValidationError("/llmResponse/response: must not be empty");
  // Rule 4: exactly one <analysis>
  const analysis = root.analysis;
  if (analysis === undefined) throw new ValidationError("/llmResponse/analysis: missing");
  if (Array.isArray(analysis)) throw new ValidationError("/llmResponse/analysis: must occur exactly once");
  const a = analysis === "" ? {} : analysis;
  // Rule 5: 0-3 subjects
  const subjects = asArray(a.subject);
  if (subjects.length > 3) throw new ValidationError("/llmResponse/analysis: at most 3 <subject>");
  const outSubjects = subjects.map((s, i) => {
    const where = `/llmResponse/analysis/subject[${i + 1}]`;
    // Rule 6: name, description, isNew
    const name = requireAttr(s, "name", where);
    const description = requireAttr(s, "description", where);
    const isNew = requireAttr(s, "isNew", where);
    if (isNew !== true && isNew !== false && isNew !== "true" && isNew !== "false")
      throw new ValidationError(`${where}/@isNew: must be true or false`);
    // Rule 7: 0-10 keywords
    const keywords = asArray(s.keyword);
    if (keywords.length > 10) throw new ValidationError(`${where}: at most 10 <keyword>`);
    const outKeywords = keywords.map((k, j) => {
      const kw = `${where}/keyword[${j + 1}]`;
      // Rule 8: term and confidence
      const term = requireAttr(k, "term", kw);
      const c = requireAttr(k, "confidence", kw);
      // Rule 9: confidence a float from 0.0 to 1.0
      const confidence = typeof c === "number" ? c : Number.parseFloat(c);
      if (!Number.isFinite(confidence) || confidence < 0 || confidence > 1)
        throw new ValidationError(`${kw}/@confidence: must be a number from 0.0 to 1.0`);
      return { term: String(term), confidence };
    });
    return { name: String(name), description: String(description), isNew: isNew === true || isNew === "true", keyword: outKeywords };
  });
  // Rule 10: exactly one <summaryUpdate>, may be empty
  const summaryUpdate = textOf(a.summaryUpdate, "/llmResponse/analysis/summaryUpdate");
  return { response, analysis: { subject: outSubjects, summaryUpdate } };
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system; // µs, all threads
};

// [best µs by the clock, best µs of CPU time] per document
function measure(xml, checked) {
  for (let i = 0; i < ITER; i++) parseLlmResponse(xml, checked); // warm-up
  let best = Infinity;
  let bestCpu = Infinity;
  for (let k = 0; k < BATCHES; k++) {
    const c0 = cpuNow();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ITER; i++) parseLlmResponse(xml, checked);
    const t = Number(process.hrtime.bigint() - t0) / 1e3 / ITER;
    const cpu = (cpuNow() - c0) / ITER;
    if (t < best) best = t;
    if (cpu < bestCpu) bestCpu = cpu;
  }
  return [best, bestCpu];
}

function main() {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: node contract_peer.js DATA_DIR\n");
    process.exit(2);
  }
  const out = (k, v) => process.stdout.write(`${k} ${v}\n`);
  const xml = fs.readFileSync(path.join(dir, "llmResponse-10KB.xml"), "utf8");
  out("node.version", process.version);
  out("fxp.version", require(path.join(__dirname, "node_modules", "fast-xml-parser", "package.json")).version);

  // untimed: the same typed result as agentwire's
  const mine = parseLlmResponse(xml, true);
  const theirs = JSON.parse(fs.readFileSync(path.join(dir, "llmResponse-aw.json"), "utf8"));
  const identical = same(mine, theirs);
  if (!identical) {
    process.stderr.write(`contract_peer: the typed results differ\n  peer:      ${JSON.stringify(mine).slice(0, 2000)}\n  agentwire: ${JSON.stringify(theirs).slice(0, 2000)}\n`);
  }
  out("same_result", identical ? "yes" : "no");
  const [parseUs, parseCpuUs] = measure(xml, false);
  const [checkedUs, checkedCpuUs] = measure(xml, true);
  out("js.parse.us", parseUs.toFixed(3));
  out("js.parse.cpu_us", parseCpuUs.toFixed(3));
  out("js.checked.us", checkedUs.toFixed(3));
  out("js.checked.cpu_us", checkedCpuUs.toFixed(3));
  out("js.iterations", ITER);
}

main();
