// Judge the verdicts on which agentwire and ajv disagree: each must be one
// of ajv's documented deviations from the specification, listed below with
// the rule that recognises it; anything else is reported and fails the
// test. Input (stdin): lines of "SCHEMA_FILE<TAB>INSTANCE_JSON<TAB>AGENTWIRE_OUTPUT_JSON".
'use strict';
const fs = require('fs');
const Ajv = require('ajv');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');

const options = { allErrors: true, strict: false, validateFormats: true };
const ajv7 = addFormats(new Ajv(options));
const ajv2020 = addFormats(new Ajv2020(options));

function at(v, pointer) {
  if (pointer === '') return v;
  for (const part of pointer.slice(1).split('/')) v = v == null ? undefined : v[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return v;
}

// Is x a multiple of m as the decimals JavaScript prints them (exact, in
// big integers)?
function decimalMultiple(x, m) {
  const frac = (n) => {
    const [mant, e] = String(n).toLowerCase().split('e');
    const [i, f = ''] = mant.replace('-', '').split('.');
    return { digits: BigInt(i + f), scale: f.length - Number(e || 0) };
  };
  const a = frac(x), b = frac(m);
  const s = Math.max(a.scale, b.scale);
  return (a.digits * 10n ** BigInt(s - a.scale)) % (b.digits * 10n ** BigInt(s - b.scale)) === 0n;
}

const deviations = [
  {
    name: 'ajv-formats "email" refuses a domain of one label (a@b) and a quoted local part ("a b"@c.d); RFC 5321, which the specification names, allows both',
    ajv: false,
    matches: (inst, ajvErrors) => ajvErrors.every((e) => e.keyword === 'format' && e.params.format === 'email' &&
      typeof at(inst, e.instancePath) === 'string' && /^"|@[^.]*$/.test(at(inst, e.instancePath))),
  },
  {
    name: 'ajv-formats "date-time" accepts a space for the "T" (2024-05-01 10:00:00Z); RFC 3339\'s date-time, which the specification names, has "T" or "t" there',
    ajv: true,
    matches: (inst, ajvErrors, awErrors) => awErrors.every((e) => /\/format$/.test(e.keywordLocation) &&
      / is not a valid date-time$/.test(e.error) && / /.test(String(at(inst, e.instanceLocation)).charAt(10))),
  },
  {
    name: 'ajv\'s multipleOf divides binary doubles (0.3 / 0.1 is 2.9999999999999996), where the specification divides the numbers written (agentwire divides decimals exactly)',
    ajv: false,
    matches: (inst, ajvErrors) => ajvErrors.every((e) => e.keyword === 'multipleOf' &&
      typeof at(inst, e.instancePath) === 'number' && decimalMultiple(at(inst, e.instancePath), e.params.multipleOf)),
  },
];

const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l);
const counts = new Map();
let undocumented = 0;
const cache = new Map();
for (const line of lines) {
  const [schemaFile, instText, awText] = line.split('\t');
  if (!cache.has(schemaFile)) {
    const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
    const draft7 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
    cache.set(schemaFile, (draft7 ? ajv7 : ajv2020).compile(schema));
  }
  const validate = cache.get(schemaFile);
  const inst = JSON.parse(instText);
  const ajvValid = validate(inst);
  const ajvErrors = validate.errors || [];
  const aw = JSON.parse(awText);
  const dev = deviations.find((d) => d.ajv === ajvValid && aw.valid !== ajvValid && d.matches(inst, ajvErrors, aw.errors || []));
  if (dev) {
    counts.set(dev.name, (counts.get(dev.name) || 0) + 1);
  } else {
    undocumented++;
    console.log(`UNDOCUMENTED ${schemaFile}: ${instText}\n  ajv: ${ajvValid} ${JSON.stringify(ajvErrors)}\n  agentwire: ${awText}`);
  }
}
for (const [name, n] of counts) console.log(`documented ajv deviation (${n} instance${n === 1 ? '' : 's'}): ${name}`);
process.exit(undocumented ? 1 : 0);
