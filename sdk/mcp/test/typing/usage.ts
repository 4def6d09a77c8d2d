// The package's declarations as an embedding application's TypeScript sees
// them; each @ts-expect-error line is a misuse that must not compile.
import { QWEDClient } from '@agentgate/sdk';
import { createServer, LIMITS, VERSION } from '@agentgate/mcp';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

const server: McpServer = createServer({ client: new QWEDClient({ apiKey: 'qwed_key_x' }), conversationPrefix: 'app' });
export const bounds: number = LIMITS.parametersBytes + LIMITS.payloadBytes;
export const v: string = VERSION;
export default server;

// @ts-expect-error the client is required
createServer({});
