// check.js is the second implementation the corpus tests of acemq-go
// compare against (internal/gen/schema/corpus_test.go). It reads one JSON
// request on stdin and writes one JSON answer on stdout:
//
//   node check.js avro  {"schema": "...", "encoded": ["hex", ...], "random": 8}
//     decodes each body the generated Go encoded with avsc, gives its value
//     in a neutral form (see neutral below) and avsc's own re-encoding, and
//     encodes `random` values of avsc's Type.random() for Go to decode.
//   node check.js json  {"schema": "...", "count": 5}
//     generates instances (json-schema-faker, then mutations of each that
//     are meant to break the schema), and validates each with ajv (the
//     draft the schema's $schema names; ajv-formats for formats).
//
// An array of requests gets an array of answers, in order (one process
// for a whole corpus). Everything is seeded: the same requests give the
// same answers.
'use strict';

// A seeded Math.random, set before the libraries load (avsc seeds its
// random generator from it when it loads).
let seed = 20260101;
Math.random = function () {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

const mode = process.argv[2];
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  let out;
  try {
    const req = JSON.parse(input);
    const one = (r) => (mode === 'avro' ? avro(r) : mode === 'json' ? json(r) : { error: 'mode must be avro or json' });
    // An array of requests is answered by an array, in order.
    out = Array.isArray(req) ? req.map((r) => { try { return one(r); } catch (e) { return { error: String(e && e.stack || e) }; } }) : one(req);
  } catch (e) {
    out = { error: String(e && e.stack || e) };
  }
  process.stdout.write(JSON.stringify(out));
});

// ---- Avro ----------------------------------------------------------------

let randomDepth = 0;

function avro(req) {
  const avsc = require('avsc');
  // Longs as BigInt: avsc's default long refuses values beyond 2^53.
  const longType = avsc.types.LongType.__with({
    fromBuffer: (buf) => buf.readBigInt64LE(),
    toBuffer: (n) => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b; },
    fromJSON: (x) => BigInt(x),
    toJSON: (n) => Number(n),
    isValid: (n) => typeof n === 'bigint',
    compare: (a, b) => (a === b ? 0 : a < b ? -1 : 1),
  });
  // Decimal as its unscaled BigInt: avsc has no decimal of its own, and
  // encoding through it writes the minimal two's complement (bytes) or
  // the sign-extended fixed size, as Avro's specification says.
  class DecimalType extends avsc.types.LogicalType {
    constructor(attrs, opts) {
      super(attrs, opts);
      this.scale = attrs.scale || 0;
      this.precision = attrs.precision || 1;
      this.size = attrs.type === 'fixed' || (attrs.type && attrs.type.type === 'fixed') ? attrs.size : undefined;
    }
    _fromValue(buf) { return { unscaled: fromTwos(buf) }; }
    _toValue(v) {
      if (v && typeof v.unscaled === 'bigint') return toTwos(v.unscaled, this.underlyingType.size);
      return v;
    }
    _resolve(type) { return type instanceof DecimalType ? (x) => x : undefined; }
    // random is an unscaled value of at most min(precision, 6) digits that
    // fits the fixed size, if any.
    random() {
      let limit = 10n ** BigInt(Math.min(this.precision, 6));
      const size = this.underlyingType.size;
      if (size !== undefined && size < 4) {
        const max = 1n << BigInt(8 * size - 1);
        if (max < limit) limit = max;
      }
      const n = BigInt(Math.floor(Math.random() * Number(2n * limit - 1n))) - limit + 1n;
      return { unscaled: n };
    }
  }
  // Arrays and maps are empty below depth 3 of random(): a recursive schema
  // (a tree of records) otherwise recurses until the stack overflows.
  for (const T of [avsc.types.ArrayType, avsc.types.MapType]) {
    const orig = T.prototype.random;
    T.prototype.random = function () {
      if (randomDepth >= 3) return T === avsc.types.ArrayType ? [] : {};
      randomDepth++;
      try { return orig.call(this); } finally { randomDepth--; }
    };
  }
  let type;
  try {
    type = avsc.Type.forSchema(JSON.parse(req.schema), {
      wrapUnions: true,
      registry: { long: longType },
      // {"type": "long", ...} (with attributes or a logical type of its own)
      // is not looked up in the registry: hook it too.
      typeHook: (schema) => (schema && typeof schema === 'object' && schema.type === 'long' ? longType : undefined),
      logicalTypes: { decimal: DecimalType },
    });
  } catch (e) {
    return { error: 'avsc refuses the schema: ' + e.message };
  }
  const decoded = (req.encoded || []).map((hex) => {
    try {
      const buf = Buffer.from(hex, 'hex');
      const v = type.fromBuffer(buf);
      return { neutral: neutral(type, v), reencoded: type.toBuffer(v).toString('hex') };
    } catch (e) {
      return { error: e.message };
    }
  });
  const random = [];
  for (let i = 0; i < (req.random || 0); i++) {
    // A recursive schema can make random() recurse without end: try again
    // (the generator has moved on).
    let last;
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const v = trimMaps(type, type.random(), 0);
        last = { hex: type.toBuffer(v).toString('hex'), neutral: neutral(type, v) };
        break;
      } catch (e) {
        last = { error: e.message };
        if (!(e instanceof RangeError)) break;
      }
    }
    random.push(last);
  }
  return { decoded, random };
}

function fromTwos(buf) {
  if (buf.length === 0) return 0n;
  let n = 0n;
  for (const b of buf) n = (n << 8n) | BigInt(b);
  if (buf[0] & 0x80) n -= 1n << BigInt(8 * buf.length);
  return n;
}

function toTwos(n, size) {
  const bytes = [];
  let x = n;
  for (;;) {
    bytes.unshift(Number(x & 0xffn));
    x >>= 8n;
    const top = bytes[0] & 0x80;
    if ((x === 0n && !top) || (x === -1n && top)) break;
  }
  if (size !== undefined) {
    while (bytes.length < size) bytes.unshift(n < 0n ? 0xff : 0);
  }
  return Buffer.from(bytes);
}

// underlying is a logical type's Avro type.
function underlying(t) { return t.underlyingType || t; }

// neutral is a value in a form both sides can write: long as a decimal
// string, float and double as the hex of their IEEE bits, bytes and fixed
// as hex, decimal as "d:" and its unscaled value, a union as null or
// {"<branch index>": value}; other logical types as their Avro value.
function neutral(t, v) {
  if (t instanceof avsc().types.LogicalType && t.constructor.name === 'DecimalType') {
    return 'd:' + v.unscaled.toString();
  }
  t = underlying(t);
  switch (t.typeName) {
    case 'null': return null;
    case 'boolean': case 'int': case 'string': case 'enum': return v;
    case 'long': case 'abstract:long': return v.toString();
    case 'float': { const b = Buffer.alloc(4); b.writeFloatLE(v); return 'f:' + b.readUInt32LE().toString(16).padStart(8, '0'); }
    case 'double': { const b = Buffer.alloc(8); b.writeDoubleLE(v); return 'f:' + b.readBigUInt64LE().toString(16).padStart(16, '0'); }
    case 'bytes': case 'fixed': return v.toString('hex');
    case 'array': return v.map((x) => neutral(t.itemsType, x));
    case 'map': { const o = {}; for (const k of Object.keys(v)) o[k] = neutral(t.valuesType, v[k]); return o; }
    case 'record': { const o = {}; for (const f of t.fields) o[f.name] = neutral(f.type, v[f.name]); return o; }
    case 'union:wrapped': {
      if (v === null) return null;
      const key = Object.keys(v)[0];
      const i = t.types.findIndex((b) => b.branchName === key);
      return { [String(i)]: neutral(t.types[i], v[key]) };
    }
  }
  throw new Error('no neutral form for ' + t.typeName);
}

function avsc() { return require('avsc'); }

// trimMaps keeps at most one entry per map, so that a re-encoding, whose
// map order is the implementation's, can be compared byte for byte.
function trimMaps(t, v, depth) {
  if (t instanceof avsc().types.LogicalType) return v;
  switch (t.typeName) {
    case 'array': return v.map((x) => trimMaps(t.itemsType, x, depth + 1));
    case 'map': {
      const keys = Object.keys(v).slice(0, 1);
      const o = {};
      for (const k of keys) o[k] = trimMaps(t.valuesType, v[k], depth + 1);
      return o;
    }
    case 'record': {
      const o = {};
      for (const f of t.fields) o[f.name] = trimMaps(f.type, v[f.name], depth + 1);
      return t.clone(o);
    }
    case 'union:wrapped': {
      if (v === null) return null;
      const key = Object.keys(v)[0];
      const b = t.types.find((x) => x.branchName === key);
      return t.clone({ [key]: trimMaps(b, v[key], depth + 1) }, { wrapUnions: true });
    }
  }
  return v;
}

// ---- JSON Schema ---------------------------------------------------------

function json(req) {
  const schema = JSON.parse(req.schema);
  const draft = draftOf(schema);
  let validate, explain;
  try {
    const Ajv = draft === '2020-12' ? require('ajv/dist/2020').default
      : draft === '2019-09' ? require('ajv/dist/2019').default
        : draft === 'draft-07' || draft === 'draft-06' ? require('ajv').default : null;
    if (!Ajv) return { draft, error: 'ajv (without ajv-draft-04) has no ' + draft };
    const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: false, logger: false });
    require('ajv-formats').default(ajv);
    validate = ajv.compile(schema);
    const all = new Ajv({ strict: false, validateSchema: false, allErrors: true, logger: false });
    require('ajv-formats').default(all);
    explain = all.compile(schema);
  } catch (e) {
    return { draft, error: 'ajv refuses the schema: ' + e.message };
  }
  const instances = [];
  const add = (kind, value) => {
    const key = JSON.stringify(value);
    if (value === undefined || instances.some((x) => x.key === key)) return;
    instances.push({ key, kind, value, ajv: validate(value) });
  };
  for (const v of [{}, [], '', 0, 1.5, true, null, { __acemq: 1 }]) add('fixed', v);
  const jsf = require('json-schema-faker').default || require('json-schema-faker');
  jsf.option({
    alwaysFakeOptionals: false, optionalsProbability: 0.5, fixedProbabilities: true,
    maxItems: 3, maxLength: 24, refDepthMax: 4, failOnInvalidTypes: false,
    failOnInvalidFormat: false, ignoreMissingRefs: true, random: Math.random,
  });
  let genError;
  for (let i = 0; i < (req.count || 5); i++) {
    let v;
    try {
      v = jsf.generate(schema);
    } catch (e) {
      genError = 'json-schema-faker: ' + e.message;
      break;
    }
    add('generated', v);
    // json-schema-faker breaks some schemas' rules (additionalProperties
    // in a oneOf, exclusive bounds, uri-template, enums under allOf):
    // repair what ajv names, so that the mutations start from a valid one.
    const fixed = repair(explain, v);
    if (fixed !== undefined) add('generated, repaired', fixed);
    const base = fixed !== undefined ? fixed : v;
    for (const [how, m] of mutations(base)) add('mutated: ' + how, m);
  }
  return { draft, generatorError: genError, instances: instances.map(({ kind, value, ajv }) => ({ kind, value, ajv })) };
}

// repair changes v where explain's errors say (an additional property
// removed, an enum's first value, a value inside a bound, a sample of a
// format, a value of the wanted type), up to 20 rounds; the repaired copy
// when it validates, else undefined.
function repair(explain, v) {
  let x = JSON.parse(JSON.stringify(v));
  for (let round = 0; round < 20; round++) {
    if (explain(x)) return round === 0 ? undefined : x;
    let changed = false;
    for (const e of explain.errors) {
      const p = e.params || {};
      let to;
      switch (e.keyword) {
        case 'additionalProperties': changed = del(x, e.instancePath + '/' + esc(p.additionalProperty)) || changed; continue;
        case 'enum': to = p.allowedValues[0]; break;
        case 'const': to = p.allowedValue; break;
        case 'format': to = FORMAT_SAMPLES[p.format]; break;
        case 'type': to = TYPE_SAMPLES[String(p.type).split(',')[0]]; break;
        case 'minimum': case 'exclusiveMinimum': case 'maximum': case 'exclusiveMaximum':
          to = p.limit + ({ '>': 1, '<': -1, '>=': 0, '<=': 0 })[p.comparison];
          break;
        default: continue;
      }
      if (to !== undefined) {
        const r = set(x, e.instancePath, to);
        if (r !== undefined) { x = r; changed = true; }
      }
    }
    if (!changed) return undefined;
  }
  return explain(x) ? x : undefined;
}

const FORMAT_SAMPLES = {
  'date-time': '2026-01-02T03:04:05Z', date: '2026-01-02', time: '03:04:05Z', duration: 'P1D',
  email: 'a@example.com', 'idn-email': 'a@example.com', hostname: 'example.com', 'idn-hostname': 'example.com',
  ipv4: '192.0.2.1', ipv6: '2001:db8::1', uri: 'https://example.com/a', 'uri-reference': '/a',
  iri: 'https://example.com/a', 'iri-reference': '/a', 'uri-template': 'https://example.com/{id}',
  uuid: '6f1c8e2a-0b7d-4c5e-9a3f-2d1e0c9b8a7f', 'json-pointer': '/a', 'relative-json-pointer': '0', regex: '^a$',
};
const TYPE_SAMPLES = { string: 'x', integer: 1, number: 1.5, boolean: true, object: {}, array: [], null: null };

function esc(k) { return String(k).replace(/~/g, '~0').replace(/\//g, '~1'); }
function parts(ptr) { return ptr === '' ? [] : ptr.slice(1).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~')); }

// set puts value at ptr in root and returns the new root (undefined when
// the path does not exist).
function set(root, ptr, value) {
  const ks = parts(ptr);
  if (ks.length === 0) return value;
  let o = root;
  for (const k of ks.slice(0, -1)) {
    if (o === null || typeof o !== 'object' || !(k in o)) return undefined;
    o = o[k];
  }
  if (o === null || typeof o !== 'object') return undefined;
  o[ks[ks.length - 1]] = value;
  return root;
}

function del(root, ptr) {
  const ks = parts(ptr);
  let o = root;
  for (const k of ks.slice(0, -1)) {
    if (o === null || typeof o !== 'object' || !(k in o)) return false;
    o = o[k];
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return false;
  return delete o[ks[ks.length - 1]];
}

function draftOf(schema) {
  const s = (schema && schema.$schema) || '';
  for (const d of ['2020-12', '2019-09', 'draft-07', 'draft-06', 'draft-04', 'draft-03']) {
    if (s.includes(d)) return d;
  }
  return s ? 'unknown: ' + s : '2020-12'; // the runtime's default
}

// mutations are changes of a valid instance meant to make it invalid: the
// wrong type at the root, each top-level property dropped or given the
// wrong type, an unknown property added; the same one level down.
function* mutations(v) {
  yield ['root of another type', wrongType(v)];
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    if (Array.isArray(v) && v.length > 0) yield ['first item of another type', [wrongType(v[0]), ...v.slice(1)]];
    return;
  }
  yield ['unknown property added', { ...v, __acemq_unknown: 1 }];
  for (const k of Object.keys(v)) {
    const { [k]: _, ...rest } = v;
    yield [k + ' removed', rest];
    yield [k + ' of another type', { ...v, [k]: wrongType(v[k]) }];
    const inner = v[k];
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
      for (const j of Object.keys(inner)) {
        const { [j]: __, ...innerRest } = inner;
        yield [k + '.' + j + ' removed', { ...v, [k]: innerRest }];
        yield [k + '.' + j + ' of another type', { ...v, [k]: { ...inner, [j]: wrongType(inner[j]) } }];
      }
    }
  }
}

function wrongType(x) {
  if (typeof x === 'string') return 12345;
  if (typeof x === 'number') return 'not a number';
  if (typeof x === 'boolean') return 'not a boolean';
  if (x === null) return 'not null';
  if (Array.isArray(x)) return { not: 'an array' };
  return 'not an object';
}
