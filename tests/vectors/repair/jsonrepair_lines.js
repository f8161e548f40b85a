// Reads lines, each a JSON string holding one broken-JSON input, and prints
// one line per input: JSON.stringify(JSON.parse(jsonrepair(input))), or null
// when jsonrepair throws. Used by tests/test_json_repair.c to compare
// agentwire's repair with the npm package jsonrepair.
//
// usage: node jsonrepair_lines.js [PATH_TO_jsonrepair_PACKAGE] < in > out
// The package defaults to bench/peers/node_modules/jsonrepair.
'use strict';
const fs = require('fs');
const path = require('path');

const pkg = process.argv[2] ||
    path.join(__dirname, '..', '..', '..', 'bench', 'peers', 'node_modules', 'jsonrepair');
const { jsonrepair } = require(pkg);

const lines = fs.readFileSync(0, 'utf8').split('\n');
const out = [];
for (const line of lines) {
  if (line === '') continue;
  let result = 'null';
  try {
    result = JSON.stringify(JSON.parse(jsonrepair(JSON.parse(line))));
  } catch (e) {
    result = 'null';
  }
  out.push(result === undefined ? 'null' : result);
}
fs.writeFileSync(1, out.join('\n') + (out.length ? '\n' : ''));
