// The ajv side of tests/test_schema_ajv.sh: for every tool schema in
// fixtures/ (the inputSchema and outputSchema of two real MCP servers, and
// OpenAI-style function definitions), generate instances from the schema
// (near-valid ones, then mutations of them: wrong types, missing required
// members, unknown members, values out of range, strings of every kind),
// judge each with ajv (draft-07 or 2020-12 by $schema, formats asserted
// through ajv-formats), and write per schema: NNN.schema.json, NNN.jsonl
// (one instance a line) and NNN.ajv (true/false a line). The shell test
// runs agentwire on the same files and compares the verdicts.
//
// Deterministic: a fixed seed, so a difference can be replayed.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');

const out = process.argv[2];
const perSchema = Number(process.argv[3] || 150);
if (!out) {
  console.error('usage: node differential.js OUTDIR [INSTANCES_PER_SCHEMA]');
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

// ajv in its documented spec-following configuration: every error, formats
// asserted, unknown keywords allowed (MCP schemas carry annotations ajv's
// strict mode refuses)
const options = { allErrors: true, strict: false, validateFormats: true };
const ajv7 = addFormats(new Ajv(options));
const ajv2020 = addFormats(new Ajv2020(options));

// mulberry32
let seed = 0x5eed1234;
function rand() {
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];
const chance = (p) => rand() < p;

const strings = ['', 'a', 'abc', 'hello world', '/tmp/project/src/main.c', 'src/**/*.ts', 'README.md', 'é', '日本語',
  '🐲 dragon', 'line1\nline2', '  padded  ', '123', '-1', 'true', 'null', 'x'.repeat(130), 'New York', 'Chicago',
  'SELECT * FROM t', '  with x as (select 1) select * from x', 'DROP TABLE t', 'Text', 'Blob', 'error', 'success',
  'debug', 'name', 'size', 'celsius', 'fahrenheit', 'relevance', 'date', 'GET', 'POST', 'daily', 'weekly',
  'example.com', 'docs.python.org', 'WITH t AS (SELECT 1) SELECT * FROM t'];
const formatted = {
  email: ['a@example.com', 'first.last@sub.example.org', 'bad@', '@x.com', 'a b@c.d', 'a@b', '"q u"@example.com'],
  'date-time': ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.5+02:00', '2024-02-30T10:00:00Z', '2024-05-01 10:00:00Z',
    '2024-05-01T25:00:00Z', '2024-05-01T10:00:00', '2023-12-31T23:59:60Z'],
  uri: ['https://example.com/a?b=c#d', 'http://[::1]:8080/', 'mailto:a@b.c', 'example.com', '/relative', 'http://a b'],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', '123e4567e89b12d3a456426614174000', 'xyz'],
  ipv4: ['192.168.0.1', '256.1.1.1', '01.2.3.4', '1.2.3'],
  duration: ['PT1S', 'P1D', 'P1W', 'PT', 'P1DT', 'P2Y3M'],
};

function numberValue(s) {
  // multiples written as decimals (1.13 for 0.01): valid by the specification
  if (s && s.multipleOf && chance(0.5)) return Number((Math.floor(rand() * 300) * s.multipleOf).toFixed(6));
  const bag = [0, 1, -1, 2, 3, 7, 10, 15, 30, 45, 49, 50, 51, 99, 100, 101, 1000, 1001, 0.5, 1.5, 2.25, 0.1, -0.5, 1e6, 3.14159,
    0.07, 1.13, 19.99];
  if (s && (s.minimum !== undefined || s.maximum !== undefined)) {
    const lo = s.minimum ?? (s.maximum - 10), hi = s.maximum ?? (s.minimum + 100);
    bag.push(lo, hi, lo - 1, hi + 1, Math.round((lo + hi) / 2));
  }
  return pick(bag);
}

function resolve(root, s) {
  let guard = 0;
  while (s && typeof s === 'object' && typeof s.$ref === 'string' && s.$ref.startsWith('#/') && guard++ < 10) {
    let t = root;
    for (const part of s.$ref.slice(2).split('/')) t = t && t[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    s = t;
  }
  return s;
}

function anyValue(depth) {
  switch (Math.floor(rand() * 7)) {
    case 0: return null;
    case 1: return chance(0.5);
    case 2: return numberValue();
    case 3: return pick(strings);
    case 4: return depth > 2 ? [] : [anyValue(depth + 1)];
    case 5: return depth > 2 ? {} : { k: anyValue(depth + 1) };
    default: return Math.floor(rand() * 100);
  }
}

// A value close to what the schema asks for.
function gen(root, s, depth) {
  s = resolve(root, s);
  if (s === true || s === undefined || s === null) return anyValue(depth);
  if (s === false) return anyValue(depth);
  if (depth > 6) return anyValue(depth);
  if (s.const !== undefined && chance(0.8)) return s.const;
  if (Array.isArray(s.enum) && chance(0.85)) return pick(s.enum);
  if (s.default !== undefined && chance(0.15)) return s.default;
  const branches = s.anyOf || s.oneOf;
  if (branches && chance(0.9)) return gen(root, pick(branches), depth + 1);
  let type = s.type;
  if (Array.isArray(type)) type = pick(type);
  if (!type) type = s.properties ? 'object' : s.items || s.prefixItems ? 'array' : s.format ? 'string' : undefined;
  switch (type) {
    case 'object': {
      const o = {};
      const props = s.properties || {};
      const req = new Set(s.required || []);
      for (const k of Object.keys(props)) if (req.has(k) ? chance(0.95) : chance(0.5)) o[k] = gen(root, props[k], depth + 1);
      if (s.patternProperties && chance(0.6)) {
        o[pick(['Accept', 'X-Trace-Id', 'content-type', '1bad', 'Bad Header'])] = pick(strings);
      }
      return o;
    }
    case 'array': {
      const min = s.minItems || 0, max = s.maxItems ?? min + 4;
      const n = min + Math.floor(rand() * (Math.min(max, min + 4) - min + 1));
      const a = [];
      for (let i = 0; i < n; i++) {
        const item = s.prefixItems && i < s.prefixItems.length ? s.prefixItems[i] : s.items;
        a.push(gen(root, item === false ? true : item, depth + 1));
      }
      return a;
    }
    case 'string':
      if (s.format && formatted[s.format] && chance(0.8)) return pick(formatted[s.format]);
      if (s.pattern && chance(0.7)) {
        // mostly strings the pattern takes (judged by JavaScript's own RegExp)
        const re = new RegExp(s.pattern, 'u');
        const fit = strings.filter((x) => re.test(x));
        if (fit.length) return pick(fit);
      }
      return pick(strings);
    case 'integer': return chance(0.85) ? Math.round(numberValue(s)) : numberValue(s);
    case 'number': return numberValue(s);
    case 'boolean': return chance(0.5);
    case 'null': return null;
    default: return anyValue(depth);
  }
}

// Change one thing somewhere in v.
function mutate(v, depth) {
  if (v && typeof v === 'object' && depth < 5 && chance(0.7)) {
    if (Array.isArray(v)) {
      if (!v.length || chance(0.2)) { v.push(anyValue(0)); return v; }
      const i = Math.floor(rand() * v.length);
      if (chance(0.2)) { v.splice(i, 1); return v; }
      if (chance(0.1)) { v.push(v[i]); return v; } // a duplicate, for uniqueItems
      v[i] = mutate(v[i], depth + 1);
      return v;
    }
    const keys = Object.keys(v);
    const r = rand();
    if (!keys.length || r < 0.2) { v[pick(['extra', 'path2', 'Path', '', 'x-y'])] = anyValue(0); return v; }
    const k = pick(keys);
    if (r < 0.45) { delete v[k]; return v; }
    v[k] = mutate(v[k], depth + 1);
    return v;
  }
  return anyValue(depth);
}

function schemasOf(file) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const list = [];
  for (const t of doc.tools) {
    const fn = t.function || t;
    const name = path.basename(file, '.json') + ':' + fn.name;
    if (fn.parameters) list.push([name + ':parameters', fn.parameters]);
    if (t.inputSchema) list.push([name + ':inputSchema', t.inputSchema]);
    if (t.outputSchema) list.push([name + ':outputSchema', t.outputSchema]);
  }
  return list;
}

const fixtures = path.join(__dirname, 'fixtures');
const all = [];
for (const f of fs.readdirSync(fixtures).sort()) if (f.endsWith('.json')) all.push(...schemasOf(path.join(fixtures, f)));

let total = 0, valid = 0;
const index = [];
all.forEach(([name, schema], n) => {
  const draft7 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
  const validate = (draft7 ? ajv7 : ajv2020).compile(schema);
  const id = String(n).padStart(3, '0');
  const lines = [], verdicts = [];
  const seen = new Set();
  for (let i = 0; i < perSchema * 4 && lines.length < perSchema; i++) {
    let v = gen(schema, schema, 0);
    if (i % 2 === 1) v = mutate(v, 0);
    if (i % 5 === 4) v = mutate(mutate(v, 0), 0);
    const text = JSON.stringify(v);
    if (text === undefined || seen.has(text)) continue;
    seen.add(text);
    const ok = validate(JSON.parse(text));
    lines.push(text);
    verdicts.push(String(ok));
    total++;
    if (ok) valid++;
  }
  fs.writeFileSync(path.join(out, id + '.schema.json'), JSON.stringify(schema));
  fs.writeFileSync(path.join(out, id + '.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(out, id + '.ajv'), verdicts.join('\n') + '\n');
  index.push(id + '\t' + name + '\t' + (draft7 ? '7' : '2020-12'));
});
fs.writeFileSync(path.join(out, 'index.tsv'), index.join('\n') + '\n');
console.log(`${all.length} schemas, ${total} instances (${valid} valid, ${total - valid} invalid by ajv)`);
