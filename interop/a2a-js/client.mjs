// An A2A client written with the official A2A JavaScript SDK: it resolves
// the Agent Card at BASE (the gate's proxy path), sends one message
// through the interface the card names, and prints one JSON line: {"reply":
// text} or {"error": {"name", "code", "message", "data"}}.
//
// usage: node client.mjs BASE API_KEY SENDER SCENARIO MESSAGE_ID [stream]
// SCENARIO: text | finance-ok | finance-bad
import { ClientFactory } from "@a2a-js/sdk/client";
import { Role } from "@a2a-js/sdk";

const [base, apiKey, sender, scenario, messageId, mode] = process.argv.slice(2);

function part(content, metadata) {
  return { content, metadata, filename: "", mediaType: "" };
}

function finance(claimedTotal) {
  return part(
    { $case: "data", value: { data: { claimed_total: claimedTotal, line_items: [
      { description: "Widget A", amount: 50, quantity: 2 },
      { description: "Widget B", amount: 25, quantity: 2 },
    ] } } },
    { payload_type: "financial_transaction" },
  );
}

const parts = {
  text: [part({ $case: "text", value: "Hello from the procurement agent" })],
  "finance-ok": [finance(150)],
  "finance-bad": [finance(999.99)],
}[scenario];
if (!parts) {
  console.error("unknown scenario " + scenario);
  process.exit(2);
}

const message = {
  messageId, contextId: "", taskId: "", role: Role.ROLE_USER, parts,
  metadata: { sender_agent_id: sender }, extensions: [], referenceTaskIds: [],
};

function text(m) {
  return (m.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

try {
  const client = await new ClientFactory().createFromUrl(base);
  const options = { serviceParameters: { "X-API-Key": apiKey } };
  const params = { tenant: "", message, configuration: undefined, metadata: undefined };
  let reply = "";
  if (mode === "stream") {
    for await (const ev of client.sendMessageStream(params, options)) {
      reply += text(ev.messageId !== undefined ? ev : (ev.payload?.value ?? ev));
    }
  } else {
    reply = text(await client.sendMessage(params, options));
  }
  process.stdout.write(JSON.stringify({ reply }) + "\n");
} catch (e) {
  process.stdout.write(JSON.stringify({ error: { name: e.name, code: e.envelopeCode ?? null, message: e.message, data: e.data ?? null } }) + "\n");
}
