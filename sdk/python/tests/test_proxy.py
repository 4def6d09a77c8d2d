"""Proxy mode: a gate fronting a real A2A agent (interop/a2a-js/upstream.mjs,
written with the official A2A JavaScript SDK; its packages come from
`npm ci` there, which .ci/run and `make deps` run). The fronted agent's
card and JSON-RPC endpoint through both clients: a text message forwarded
and answered by the agent, a hallucinated total blocked by the gate as a
JSON-RPC error carrying the signed verdict."""

from __future__ import annotations

import asyncio
import re
import selectors
import shutil
import subprocess
from typing import Iterator

import pytest

from conftest import REPO_ROOT, Gate, _stop, running_gate
from qwed_sdk import AsyncQWEDClient, QWEDClient

UPSTREAM = REPO_ROOT / "interop" / "a2a-js"


@pytest.fixture(scope="module")
def proxy_gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    node = shutil.which("node")
    if node is None or not (UPSTREAM / "node_modules" / "@a2a-js").is_dir():
        pytest.fail("proxy mode needs node and interop/a2a-js's packages: cd interop/a2a-js && npm ci")
    root = tmp_path_factory.mktemp("proxy")
    with open(root / "upstream.log", "wb") as log:
        agent = subprocess.Popen([node, "upstream.mjs", "0"], cwd=UPSTREAM, stdout=subprocess.PIPE, stderr=log)
    try:
        assert agent.stdout is not None
        with selectors.DefaultSelector() as sel:  # its first line names its port; wait with a deadline
            sel.register(agent.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=60)
        m = re.match(r"listening (\d+)", agent.stdout.readline().decode() if ready else "")
        if not m:
            raise RuntimeError(f"the A2A agent did not start; see {root / 'upstream.log'}")
        upstream = f"treasury=http://127.0.0.1:{m.group(1)}"
        with running_gate(
            root, "--refusal-rate", "0", "--a2a-upstream", upstream, "--a2a-trusted-agents", "procurement,treasury"
        ) as gate:
            yield gate
    finally:
        _stop(agent)


def message(message_id: str, part: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "metadata": {"sender_agent_id": "procurement"},
                "parts": [part],
            }
        },
    }


BAD_TOTAL = {
    "data": {"data": {"claimed_total": 999.99, "line_items": [{"description": "Widget", "amount": 50, "quantity": 2}]}},
    "metadata": {"payload_type": "financial_transaction"},
}


def test_proxy_mode_with_the_sync_client(proxy_gate):
    with QWEDClient(api_key=proxy_gate.admin_key, base_url=proxy_gate.url) as c:
        card = c.get_a2a_agent_card("treasury")
        assert card["supportedInterfaces"][0]["url"] == proxy_gate.url + "/a2a/proxy/treasury"
        assert c.get_a2a_agent_card("treasury", legacy=True)["name"] == card["name"]

        ok = c.a2a_proxy("treasury", message("py-1", {"text": "Hello"}), a2a_version="1.0")
        assert ok["result"]["message"]["parts"] == [{"text": "echo: Hello"}]

        blocked = c.a2a_proxy("treasury", message("py-2", BAD_TOTAL), a2a_version="1.0")
        assert blocked["error"]["code"] == -32050 and blocked["error"]["data"]["status"] == "blocked"
        assert blocked["error"]["data"]["attestation_jwt"].count(".") == 2  # the signed, recorded verdict


def test_proxy_mode_with_the_async_client(proxy_gate):
    async def main() -> None:
        async with AsyncQWEDClient(api_key=proxy_gate.admin_key, base_url=proxy_gate.url) as c:
            assert (await c.get_a2a_agent_card("treasury"))["name"]
            ok = await c.a2a_proxy("treasury", message("py-3", {"text": "Hi"}), a2a_version="1.0")
            assert ok["result"]["message"]["parts"] == [{"text": "echo: Hi"}]
            blocked = await c.a2a_proxy("treasury", message("py-4", BAD_TOTAL), a2a_version="1.0")
            assert blocked["error"]["data"]["status"] == "blocked"

    asyncio.run(main())
