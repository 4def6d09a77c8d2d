#!/usr/bin/env node
// gen-types.mjs writes src/types.gen.ts: the TypeScript types of the gate's HTTP bodies, generated
// from the repository's JSON Schemas so that they are never written twice by hand.
//
// Source: the OpenAPI document schemas/openapi.v1.json (its components.schemas) when it exists,
// else the gate's own schemas, schemas/gate/defs.v1.json ($defs) and schemas/gate/commands/*.json
// (the request bodies, named <File>Body).
//
//   node scripts/gen-types.mjs           write src/types.gen.ts
//   node scripts/gen-types.mjs --check   exit 1 when src/types.gen.ts differs from what it would write
//
// The mapping covers the JSON Schema the gate's schemas use: type (and type arrays), $ref, properties,
// required, additionalProperties, items, prefixItems, enum, const, anyOf, oneOf, allOf. Conditional
// keywords (if/then/else) and validation-only keywords (pattern, minimum, format …) do not change the
// TypeScript type and are left out. A named object schema that also admits null becomes an interface
// (the null is the input's "absent").
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const repo = join(pkg, '..', '..');
const out = join(pkg, 'src', 'types.gen.ts');

/** root is the document local $refs point into (the OpenAPI document, or the gate's defs). */
let root = {};

/** loadSchemas returns the named schemas to generate, in output order, and where they came from. */
function loadSchemas() {
  const openapi = join(repo, 'schemas', 'openapi.v1.json');
  if (existsSync(openapi)) {
    const doc = JSON.parse(readFileSync(openapi, 'utf8'));
    root = doc;
    const comps = doc?.components?.schemas ?? {};
    return { source: [relative(repo, openapi)], named: Object.entries(comps), paths: doc.paths ?? {} };
  }
  const gate = join(repo, 'schemas', 'gate');
  const defs = JSON.parse(readFileSync(join(gate, 'defs.v1.json'), 'utf8'));
  root = defs;
  const named = Object.entries(defs.$defs ?? {});
  const files = readdirSync(join(gate, 'commands')).filter((f) => f.endsWith('.json')).sort();
  for (const f of files) {
    const schema = JSON.parse(readFileSync(join(gate, 'commands', f), 'utf8'));
    named.push([pascal(f.replace(/\.v\d+\.json$/, '')) + 'Body', schema]);
  }
  return { source: ['schemas/gate/defs.v1.json', 'schemas/gate/commands/*.json'], named, paths: {} };
}

/**
 * responses renders the interface Responses: for each operation of the OpenAPI document, by its
 * operationId, the type of its successful (2xx) JSON answers; a text or binary answer is string.
 */
function responses(paths) {
  const rows = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const op = item?.[method];
      if (!op?.operationId) continue;
      const types = [];
      for (const [code, r] of Object.entries(op.responses ?? {})) {
        if (!/^2/.test(code)) continue;
        const content = r?.content ?? {};
        const json = Object.keys(content).filter((ct) => /json/.test(ct));
        const picked = json.length > 0 ? json : Object.keys(content);
        for (const ct of picked) types.push(json.length > 0 ? tsType(content[ct].schema, '  ') : 'string');
      }
      if (types.length === 0) types.push('unknown');
      rows.push(comment(`${method.toUpperCase()} ${path}`, '  ') + `  ${propKey(op.operationId)}: ${union(types)};\n`);
    }
  }
  if (rows.length === 0) return '';
  return '\n/** The successful answer of each operation of the HTTP API, by its operationId. */\nexport interface Responses {\n' + rows.join('') + '}\n';
}

/** pascal turns "action-verify" into "ActionVerify". */
function pascal(s) {
  return s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

/**
 * refType is the type a $ref names: the named schema's type when the pointer is a named schema
 * (#/components/schemas/X, #/$defs/X, or the gate's defs document's), else the schema the
 * pointer reaches in the root document, rendered in place.
 */
function refType(ref, ind, depth) {
  const named = ref.match(/#\/(?:components\/schemas|\$defs)\/([^/]+)$/);
  if (named) return pascalIfNeeded(decodeURIComponent(named[1]));
  const hash = ref.indexOf('#');
  if (hash !== 0) throw new Error(`unsupported $ref ${ref}: only local pointers and named definitions`);
  let node = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = node?.[key];
    if (node === undefined) throw new Error(`$ref ${ref} points nowhere`);
  }
  if (depth > 32) throw new Error(`$ref ${ref}: too deep`);
  return tsType(node, ind, depth + 1);
}

function pascalIfNeeded(name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : pascal(name);
}

const ident = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function propKey(k) {
  return ident.test(k) ? k : JSON.stringify(k);
}

/** comment renders a JSDoc block of text at indentation ind, or nothing. */
function comment(text, ind) {
  if (typeof text !== 'string' || text.trim() === '') return '';
  const lines = text.trim().replace(/\*\//g, '*\\/').split('\n');
  if (lines.length === 1) return `${ind}/** ${lines[0]} */\n`;
  return `${ind}/**\n${lines.map((l) => `${ind} * ${l}`.trimEnd()).join('\n')}\n${ind} */\n`;
}

/** union joins TypeScript types with |, without duplicates, "never" for none. */
function union(types) {
  const seen = [...new Set(types)];
  if (seen.length === 0) return 'never';
  if (seen.includes('unknown')) return 'unknown';
  return seen.join(' | ');
}

/** objectBody renders the members of an object schema at indentation ind. */
function objectBody(s, ind, depth = 0) {
  const req = new Set(Array.isArray(s.required) ? s.required : []);
  const props = s.properties ?? {};
  let body = '';
  for (const k of Object.keys(props)) {
    const p = props[k];
    body += comment(p?.description, ind + '  ');
    body += `${ind}  ${propKey(k)}${req.has(k) ? '' : '?'}: ${tsType(p, ind + '  ', depth)};\n`;
  }
  const ap = s.additionalProperties;
  if (ap !== false && ap !== undefined) {
    body += `${ind}  [key: string]: ${ap === true ? 'unknown' : union([tsType(ap, ind + '  ', depth), 'undefined'])};\n`;
  } else if (ap === undefined && Object.keys(props).length === 0) {
    body += `${ind}  [key: string]: unknown;\n`;
  }
  return body;
}

/** isObjectSchema reports whether s describes objects (and perhaps null) only. */
function isObjectSchema(s) {
  if (!s || typeof s !== 'object') return false;
  const t = Array.isArray(s.type) ? s.type.filter((x) => x !== 'null') : [s.type];
  return t.length === 1 && t[0] === 'object' && !s.anyOf && !s.oneOf && !s.allOf && !s.$ref && !s.enum && !('const' in s);
}

/** tsType renders the TypeScript type of schema s (indentation ind for inline objects). */
function tsType(s, ind = '', depth = 0) {
  if (s === true || s === undefined) return 'unknown';
  if (s === false) return 'never';
  if (s.$ref) {
    const base = refType(s.$ref, ind, depth);
    return Array.isArray(s.type) && s.type.includes('null') ? `${base} | null` : base;
  }
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return union(s.enum.map((v) => JSON.stringify(v)));
  if (Array.isArray(s.allOf)) {
    // Conditional members (if/then) render as unknown and add nothing to an intersection.
    const parts = s.allOf.map((x) => tsType(x, ind, depth));
    const rest = { ...s };
    delete rest.allOf;
    if (rest.type || rest.properties) parts.push(tsType(rest, ind, depth));
    const kept = parts.filter((p) => p !== 'unknown');
    if (kept.length === 0) return 'unknown';
    return kept.length === 1 ? kept[0] : kept.map((p) => `(${p})`).join(' & ');
  }
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    return union((s.anyOf ?? s.oneOf).map((x) => tsType(x, ind, depth)));
  }
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  if (types.length === 0) {
    if (s.properties || s.additionalProperties !== undefined) types.push('object');
    else if (s.items) types.push('array');
    else return 'unknown';
  }
  return union(types.map((t) => {
    switch (t) {
      case 'null': return 'null';
      case 'string': return 'string';
      case 'integer':
      case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'array': {
        if (Array.isArray(s.prefixItems)) return `[${s.prefixItems.map((x) => tsType(x, ind, depth)).join(', ')}]`;
        const it = tsType(s.items, ind, depth);
        return /[|& ]/.test(it) ? `Array<${it}>` : `${it}[]`;
      }
      case 'object': return `{\n${objectBody(s, ind, depth)}${ind}}`;
      default: return 'unknown';
    }
  }));
}

/** camel turns "after_seq" into "afterSeq". */
function camel(s) {
  return s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/** deref follows a local $ref into the root document. */
function deref(x) {
  for (let i = 0; x && x.$ref && i < 32; i++) {
    x = x.$ref.slice(2).split('/').reduce((n, k) => n?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], root);
  }
  return x;
}

/**
 * queries renders the interface Queries: for each operation with query parameters, by its
 * operationId, the parameters in camelCase (the client sends them in the document's snake_case);
 * a time parameter (an RFC 3339 string) also takes a Date.
 */
function queries(paths) {
  const rows = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const op = item?.[method];
      if (!op?.operationId) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(deref).filter((q) => q?.in === 'query');
      if (params.length === 0) continue;
      let body = '';
      for (const q of params) {
        let t = tsType(q.schema ?? {}, '    ');
        if (/RFC 3339/.test(q.description ?? q.schema?.description ?? '')) t = union([t, 'Date']);
        body += comment(q.description, '    ') + `    ${propKey(camel(q.name))}${q.required ? '' : '?'}: ${t};\n`;
      }
      rows.push(comment(`${method.toUpperCase()} ${path}`, '  ') + `  ${propKey(op.operationId)}: {\n${body}  };\n`);
    }
  }
  if (rows.length === 0) return '';
  return '\n/** The query parameters of each operation that takes some, by its operationId, in camelCase. */\nexport interface Queries {\n' + rows.join('') + '}\n';
}

/** render returns the text of src/types.gen.ts. */
export function render() {
  const { source, named, paths } = loadSchemas();
  let text = `// Code generated by scripts/gen-types.mjs from ${source.join(' and ')}; DO NOT EDIT.\n`;
  text += '// Regenerate with `npm run gen`; test/types.test.mjs fails when this file is stale.\n';
  text += '/* eslint-disable */\n';
  for (const [rawName, s] of named) {
    const name = pascalIfNeeded(rawName);
    text += '\n' + comment(s.description ?? s.title, '');
    if (isObjectSchema(s)) {
      text += `export interface ${name} {\n${objectBody(s, '')}}\n`;
    } else {
      text += `export type ${name} = ${tsType(s, '')};\n`;
    }
  }
  return text + responses(paths) + queries(paths);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = render();
  if (process.argv.includes('--check')) {
    const cur = existsSync(out) ? readFileSync(out, 'utf8') : '';
    if (cur !== text) {
      console.error(`${relative(pkg, out)} is stale: run make sdk-types (or npm run gen)`);
      process.exit(1);
    }
  } else {
    writeFileSync(out, text);
  }
}
