// The shipped declarations (dist/*.d.ts) against the MCP SDK's types:
// test/typing/usage.ts must compile, and each of its @ts-expect-error misuses must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the documented call shapes type-check against dist/*.d.ts, and misuse does not', () => {
  const tsc = join(pkg, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(pkg, 'test', 'typing', 'tsconfig.json')], { encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc: ${e.stdout}${e.stderr}`);
  }
});
