// An A2A agent written with the official A2A JavaScript SDK, the upstream
// agentgate fronts in its proxy-mode tests. It listens on 127.0.0.1 (port
// 0 unless given), prints "listening PORT" on stdout once it serves, and
// answers every message with one agent message echoing the parts it got.
// GET /received lists the messageIds it was sent, in order: the tests
// check what the gate forwarded (and what it did not).
import express from "express";
import { randomUUID } from "node:crypto";
import { Role } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const received = [];

function describe(part) {
  const c = part.content;
  if (!c) return "empty";
  if (c.$case === "text") return c.value;
  if (c.$case === "data") return JSON.stringify(c.value);
  return c.$case;
}

const executor = {
  async execute(ctx, bus) {
    const msg = ctx.userMessage;
    received.push(msg.messageId);
    bus.publish(AgentEvent.message({
      messageId: randomUUID(),
      contextId: ctx.contextId,
      taskId: "",
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: "text", value: "echo: " + msg.parts.map(describe).join(" | ") }, metadata: undefined, filename: "", mediaType: "" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }));
    bus.finished();
  },
  async cancelTask() {},
};

const app = express();
const server = app.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  const port = server.address().port;
  const card = {
    name: "Treasury Agent",
    description: "Echoes what it is sent (agentgate interop upstream)",
    supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes its input", tags: ["echo"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.get("/received", (_req, res) => res.json(received));
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`listening ${port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
