// src/types.gen.ts is generated from the repository's schemas: this test fails when it is stale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { render } from '../scripts/gen-types.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

test('src/types.gen.ts is what scripts/gen-types.mjs generates from the schemas (npm run gen)', () => {
  const committed = readFileSync(join(pkg, 'src', 'types.gen.ts'), 'utf8');
  // Not assert.equal: its diff of two 2,000-line files would bury the one thing to do.
  assert.ok(committed === render(), 'sdk/typescript/src/types.gen.ts is stale (the OpenAPI document changed): run `make sdk-types` (or `cd sdk/typescript && npm run gen`), then `npm run build && npm test`, and commit it');
});

test('the generated types name the gate structures the client uses', () => {
  const text = render();
  for (const name of ['DecisionReply', 'Action', 'ActionContext', 'Options', 'Permissions', 'Limits', 'TrustLevel', 'ToolSpec', 'Approval', 'ApprovalReply', 'A2AReply', 'ExecutionReply', 'RegistrationReply', 'KeyReply', 'TokenReply']) {
    assert.match(text, new RegExp(`export (interface|type) ${name}\\b`), name);
  }
  // A decision is one of the five of the spec, as a closed union.
  assert.match(text, /export type Decision = "APPROVED" \| "DENIED" \| "CORRECTED" \| "PENDING" \| "BUDGET_EXCEEDED";/);
});

test('the README\'s quick start and the documented call shapes type-check against dist/*.d.ts, and misuse does not', () => {
  // test/typing/usage.ts holds @ts-expect-error lines: tsc fails if one of them compiles.
  const tsc = join(pkg, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(pkg, 'test', 'typing', 'tsconfig.json')], { encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc: ${e.stdout}${e.stderr}`);
  }
});

test('VERSION is package.json\'s version', async () => {
  const { VERSION, USER_AGENT } = await import('../dist/index.js');
  const pkgJson = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  assert.equal(VERSION, pkgJson.version);
  assert.equal(USER_AGENT, `agentgate-sdk-typescript/${pkgJson.version}`);
});
