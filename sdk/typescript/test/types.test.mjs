// src/types.gen.ts is generated from the repository's schemas: this test fails when it is stale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { render } from '../scripts/gen-types.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

test('src/types.gen.ts is what scripts/gen-types.mjs generates from the schemas (npm run gen)', () => {
  const committed = readFileSync(join(pkg, 'src', 'types.gen.ts'), 'utf8');
  assert.equal(committed, render());
});

test('the generated types name the gate structures the client uses', () => {
  const text = render();
  for (const name of ['DecisionReply', 'Action', 'ActionContext', 'Options', 'Permissions', 'Limits', 'TrustLevel', 'ToolSpec', 'Approval', 'ApprovalReply', 'A2AReply', 'ExecutionReply', 'RegistrationReply', 'KeyReply', 'TokenReply']) {
    assert.match(text, new RegExp(`export (interface|type) ${name}\\b`), name);
  }
  // A decision is one of the five of the spec, as a closed union.
  assert.match(text, /export type Decision = "APPROVED" \| "DENIED" \| "CORRECTED" \| "PENDING" \| "BUDGET_EXCEEDED";/);
});
