#!/usr/bin/env node
/**
 * agentgate-mcp: the MCP server over stdio. Configured by the environment:
 * AGENTGATE_URL (default http://127.0.0.1:8080), AGENTGATE_API_KEY (a
 * principal's key) and/or AGENTGATE_AGENT_TOKEN (an agent's token). stdout
 * carries the MCP protocol only; diagnostics go to stderr and never name a
 * credential's value.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { QWEDClient } from '@agentgate/sdk';
import { createServer, VERSION } from './server.js';

const USAGE = `agentgate-mcp ${VERSION}: agentgate's verify, tool check, approval status and A2A intercept as MCP tools (stdio)

Environment:
  AGENTGATE_URL          the gate (default http://127.0.0.1:8080)
  AGENTGATE_API_KEY      a principal's API key (approvals, A2A intercept, agents' verify)
  AGENTGATE_AGENT_TOKEN  an agent's token (its own verify, tool checks, approvals, A2A messages)
At least one of AGENTGATE_API_KEY and AGENTGATE_AGENT_TOKEN is required.
`;

/** isGateUrl: an absolute http(s) URL without user:password@ (fetch refuses those, and they would be a secret in a URL). */
function isGateUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

function main(argv: string[]): number | undefined {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`agentgate-mcp: unexpected argument(s); it takes none (see --help)\n`);
    return 2;
  }
  const apiKey = process.env.AGENTGATE_API_KEY || undefined;
  const agentToken = process.env.AGENTGATE_AGENT_TOKEN || undefined;
  if (apiKey === undefined && agentToken === undefined) {
    process.stderr.write('agentgate-mcp: set AGENTGATE_API_KEY or AGENTGATE_AGENT_TOKEN (see --help)\n');
    return 2;
  }
  const baseUrl = process.env.AGENTGATE_URL || undefined;
  if (baseUrl !== undefined && !isGateUrl(baseUrl)) {
    // the value is not repeated: a malformed one may hold a secret
    process.stderr.write('agentgate-mcp: AGENTGATE_URL must be an http:// or https:// URL without user information\n');
    return 2;
  }
  let client: QWEDClient;
  try {
    client = new QWEDClient({ apiKey, agentToken, baseUrl });
  } catch (err) {
    process.stderr.write(`agentgate-mcp: ${err instanceof Error ? err.message : 'invalid configuration'}\n`);
    return 2;
  }
  const server = createServer({ client });
  const transport = new StdioServerTransport();
  server.connect(transport).catch((err: unknown) => {
    process.stderr.write(`agentgate-mcp: connecting stdio: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
  return undefined;
}

const code = main(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
