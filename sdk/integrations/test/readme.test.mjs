// The README's LangChain.js quick start, run as written (node, this package's
// dependencies) against a real gate: it prints the tool's answer because the
// gate approved the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eachDeployment, setupPrincipal } from './fixtures.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

eachDeployment((ctx) => {
  test('the README\'s LangChain.js quick start runs as written', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const block = /## Quick start[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(block?.includes('QWEDVerificationCallback'), 'no LangChain.js block in the README');
    const p = await setupPrincipal(ctx.gate, 'org_readme');
    // inside the package, so that its imports resolve as a user's project's would
    const file = join(pkg, `.quickstart-${process.pid}.mjs`);
    writeFileSync(file, block);
    try {
      const out = execFileSync(process.execPath, [file], {
        env: { PATH: process.env.PATH, AGENTGATE_URL: ctx.gate.url, AGENT_TOKEN: p.token, AGENT_ID: p.agentId },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(out, 'rows for orders of 42\n');
    } finally {
      rmSync(file, { force: true });
    }
  });
});
