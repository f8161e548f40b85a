#!/usr/bin/env node
// schema_peer.js: the JavaScript side of the schema benchmark (issue 11).
//
//   node schema_peer.js DATA_DIR
//
// Reads what bench/bench_schema.c wrote: DATA_DIR/schemas.json (the tool
// schemas, then the 1 MB row's) and DATA_DIR/ROW.tsv (lines
// "SCHEMA_INDEX<TAB>INSTANCE_JSON"). Every schema is compiled once with ajv
// in its fastest mode (the defaults: the first error ends a validation;
// draft-07 with `Ajv`, 2020-12 with `ajv/dist/2020`, by $schema; formats
// asserted through ajv-formats, as agentwire asserts them; strict mode off,
// since MCP schemas carry annotations it refuses), instances parsed once,
// untimed. Then, per row, every instance validated, the row repeated to fill
// a batch, 7 batches, the best batch's mean in µs per instance and MB/s of
// instance JSON; and compile time per schema (a fresh copy of each schema
// object, so ajv's cache never answers; the best of 7 rounds' means).
// Prints "key value" lines for bench/run_schema.sh, with the number of
// valid instances per row (untimed) to compare with agentwire's verdicts.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require(path.join(__dirname, 'node_modules', 'ajv'));
const Ajv2020 = require(path.join(__dirname, 'node_modules', 'ajv', 'dist', '2020'));
const addFormats = require(path.join(__dirname, 'node_modules', 'ajv-formats'));

const dir = process.argv[2];
const BATCHES = 7;
const BATCH_SECONDS = 0.15;
const options = { strict: false };
const now = () => Number(process.hrtime.bigint()) / 1e9;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

const schemaTexts = JSON.parse(fs.readFileSync(path.join(dir, 'schemas.json'), 'utf8')).map((s) => JSON.stringify(s));
const isDraft7 = (s) => typeof s.$schema === 'string' && s.$schema.includes('draft-07');
const ajv7 = addFormats(new Ajv(options));
const ajv2020 = addFormats(new Ajv2020(options));
const validators = schemaTexts.map((t) => { const s = JSON.parse(t); return (isDraft7(s) ? ajv7 : ajv2020).compile(s); });

console.log(`node.version ${process.version.slice(1)}`);
console.log(`ajv.version ${require(path.join(__dirname, 'node_modules', 'ajv', 'package.json')).version}`);
console.log(`ajv-formats.version ${require(path.join(__dirname, 'node_modules', 'ajv-formats', 'package.json')).version}`);

for (const name of ['mcp-small', 'mcp-1kb', 'mcp-5kb', 'openai', 'big']) {
  const lines = fs.readFileSync(path.join(dir, name + '.tsv'), 'utf8').split('\n').filter((l) => l);
  const cases = lines.map((l) => { const tab = l.indexOf('\t'); return [validators[Number(l.slice(0, tab))], JSON.parse(l.slice(tab + 1)), l.length - tab - 1]; });
  let bytes = 0, valid = 0;
  for (const [v, inst, n] of cases) { bytes += n; if (v(inst)) valid++; }
  const pass = () => { let ok = 0; for (let i = 0; i < cases.length; i++) if (cases[i][0](cases[i][1])) ok++; return ok; };
  let passes = 0;
  const t0 = now();
  while (now() - t0 < BATCH_SECONDS / 4) { pass(); passes++; }
  passes *= 4;
  let best = Infinity, bestCpu = Infinity;
  for (let b = 0; b < BATCHES; b++) {
    const w0 = now(), c0 = cpu();
    for (let p = 0; p < passes; p++) pass();
    best = Math.min(best, now() - w0);
    bestCpu = Math.min(bestCpu, cpu() - c0);
  }
  const n = passes * cases.length;
  console.log(`js.${name}.us ${(best / n * 1e6).toFixed(4)}`);
  console.log(`js.${name}.cpu_us ${(bestCpu / n * 1e6).toFixed(4)}`);
  console.log(`js.${name}.mbps ${(passes * bytes / best / 1e6).toFixed(2)}`);
  console.log(`js.${name}.valid ${valid}`);
}

// compile time: fresh copies, so that the cache (keyed by the schema
// object) misses; a schema with $id is removed again after compiling
function compileRound(list, rounds) {
  const copies = [];
  for (let k = 0; k < rounds; k++) for (const t of list) copies.push(JSON.parse(t));
  const a7 = addFormats(new Ajv(options)), a2020 = addFormats(new Ajv2020(options));
  const w0 = now(), c0 = cpu();
  for (const s of copies) {
    const a = isDraft7(s) ? a7 : a2020;
    a.compile(s);
    if (s.$id) a.removeSchema(s.$id); /* an $id may be registered once */
  }
  return [(now() - w0) / copies.length, (cpu() - c0) / copies.length];
}
let best = Infinity, bestCpu = Infinity;
for (let b = 0; b < BATCHES; b++) { const [w, c] = compileRound(schemaTexts, 20); best = Math.min(best, w); bestCpu = Math.min(bestCpu, c); }
console.log(`js.compile.us ${(best * 1e6).toFixed(3)}`);
console.log(`js.compile.cpu_us ${(bestCpu * 1e6).toFixed(3)}`);
best = Infinity;
for (let b = 0; b < BATCHES; b++) best = Math.min(best, compileRound([schemaTexts[schemaTexts.length - 1]], 50)[0]);
console.log(`js.compile_big.us ${(best * 1e6).toFixed(3)}`);
