"""AsyncQWEDClient and AsyncQWEDAgentClient against the real gate: the same
methods and results as the sync clients (each test drives one event loop)."""

from __future__ import annotations

import asyncio
import inspect
import time

import pytest

from flaky_proxy import DROP_ANSWER, HOLD, RELAY, RELAY_THEN_CLOSE, RESET, FlakyProxy
from qwed_sdk import (
    ActionDecision,
    ActivityPage,
    APIConnectionError,
    APITimeoutError,
    AsyncQWEDAgentClient,
    AsyncQWEDClient,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    QWEDClient,
    ValidationError,
)
from qwed_sdk._endpoints import Endpoints


def test_every_method_is_awaitable_on_the_async_client():
    """The async client has every public method of the sync one."""
    names = [n for n, f in inspect.getmembers(Endpoints, inspect.isfunction) if not n.startswith("_")]
    assert len(names) > 60
    c = AsyncQWEDClient(api_key="k", base_url="http://127.0.0.1:9")
    for n in names:
        assert callable(getattr(c, n))


def test_async_type_stubs_are_up_to_date():
    """_async_types.py (the async methods as type checkers see them) is what
    tools/gen_async.py writes from the current Endpoints."""
    import subprocess
    import sys
    from pathlib import Path

    tool = Path(__file__).resolve().parent.parent / "tools" / "gen_async.py"
    r = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def principal(gate):
    with QWEDClient(api_key=gate.admin_key, base_url=gate.url) as admin:
        pid = "org_async_%d" % time.monotonic_ns()
        return pid, admin.issue_principal_key(pid)["api_key"]


def test_async_flow_matches_the_sync_one(gate, principal):
    pid, key = principal

    async def main():
        async with AsyncQWEDClient(api_key=key, base_url=gate.url) as c:
            agent = await c.register_agent(
                name="AsyncAnalyst",
                type="supervised",
                principal_id=pid,
                permissions={"allowed_engines": ["math", "sql"]},
                budget={"max_daily_cost_usd": 100},
            )
            a = agent["agent_id"]
            d = await c.verify_action(
                agent_id=a,
                action={"type": "execute_sql", "query": "SELECT id FROM orders"},
                context={"conversation_id": "conv_a", "step_number": 1},
                options={"require_attestation": True},
            )
            assert isinstance(d, ActionDecision) and d.decision == "APPROVED"
            assert d.verified_query == "SELECT id FROM orders"
            claims = await c.verify_attestation(d.attestation)
            assert claims["jti"] == d.action_id and claims["agent_id"] == a
            denied = await c.verify_action(
                agent_id=a,
                action={"type": "execute_sql", "query": "SELECT * FROM users"},
                context={"conversation_id": "conv_a", "step_number": 2},
            )
            assert denied["decision"] == "DENIED" and denied["error"]["code"].startswith("QWED-")
            budget = await c.get_agent_budget(a)
            assert budget["budget"]["cost"]["max_daily_usd"] == 100
            activity = await c.get_agent_activity(a, limit=10)
            assert isinstance(activity, ActivityPage)
            assert [e["decision"] for e in activity] == ["APPROVED", "DENIED"]  # in log order
            pdf = await c.export_compliance_report(a, format="pdf")  # streamed (chunked) by the gate
            assert pdf.startswith(b"%PDF")
            assert (await c.healthz())["status"] == "ok"
            assert "agentgate_" in await c.metrics()
            with pytest.raises(NotFoundError) as e:
                await c.get_agent("agent_missing")
            assert e.value.code == "QWED-AGENT-001"
            with pytest.raises(ValidationError) as e:
                await c.verify_action(a, {"type": "calculate", "query": "1"})
            assert e.value.code == "QWED-AGENT-CTX-001"
            call = dict(
                agent_id=a,
                action={"type": "calculate", "query": "8*8"},
                context={"conversation_id": "idem", "step_number": 1},
                idempotency_key="async-key-1",
            )
            first, again = await c.verify_action(**call), await c.verify_action(**call)
            assert first == again
            with pytest.raises(ConflictError):
                await c.verify_action(**{**call, "action": {"type": "calculate", "query": "8*9"}})
            # concurrent calls share the pool
            infos = await asyncio.gather(*(c.get_agent(a) for _ in range(8)))
            assert {i["agent_id"] for i in infos} == {a}
        async with AsyncQWEDClient(api_key="qwed_key_wrong", base_url=gate.url) as bad:
            with pytest.raises(AuthenticationError) as e:
                await bad.get_agent(a)
            assert e.value.code == "QWED-AUTH-002"

    asyncio.run(main())


def test_one_async_client_serves_successive_event_loops(gate):
    """asyncio.run twice with one client: the second loop does not reuse the
    first one's (closed) connections."""
    c = AsyncQWEDClient(api_key=gate.admin_key, base_url=gate.url)

    async def health() -> str:
        return (await c.healthz())["status"]

    assert asyncio.run(health()) == "ok"
    assert asyncio.run(health()) == "ok"
    asyncio.run(c.close())


def test_async_agent_client_as_in_the_spec(gate, principal):
    pid, key = principal

    async def main():
        agent = await AsyncQWEDAgentClient.register(
            name="MyAgent",
            principal_id=pid,
            permissions={"allowed_engines": ["math", "sql"]},
            budget={"max_daily_cost_usd": 50.00},
            api_key=key,
            base_url=gate.url,
        )
        async with agent:
            result = await agent.verify_action(
                {"type": "execute_sql", "query": "SELECT id FROM orders"}, options={"require_attestation": True}
            )
            assert result.decision == "APPROVED" and result["step_number"] == 1
            logged = await agent.log_execution(action_id=result.action_id, success=True, attestation=result.attestation)
            assert logged["logged"] is True
            second = await agent.verify_action({"type": "calculate", "query": "2+3"})
            assert second["step_number"] == 2
            rotated = await agent.rotate_token()
            third = await agent.verify_action({"type": "calculate", "query": "2+4"})  # with the new token
            assert rotated["agent_token"].startswith("qwed_agent_") and third.decision == "APPROVED"
            assert (await agent.get_budget())["agent_id"] == agent.agent_id

    asyncio.run(main())


def test_async_retries_timeouts_and_connection_errors(gate, principal):
    pid, key = principal
    with QWEDClient(api_key=key, base_url=gate.url) as c:
        a = c.register_agent(name="R", principal_id=pid, permissions={"allowed_engines": ["math"]})["agent_id"]
    lost = FlakyProxy(gate.url, lambda i: DROP_ANSWER if i == 0 else RELAY)
    reset = FlakyProxy(gate.url, lambda i: RESET)
    hold = FlakyProxy(gate.url, lambda i: HOLD)
    closing = FlakyProxy(gate.url, lambda i: RELAY_THEN_CLOSE)

    async def main():
        async with AsyncQWEDClient(api_key=key, base_url=lost.url, max_retries=2) as c:
            d = await c.verify_action(
                a, {"type": "calculate", "query": "4*4"}, {"conversation_id": "l", "step_number": 1}
            )
            assert d.decision == "APPROVED"
        keys = [r.get("idempotency-key") for r in lost.requests]
        assert len(keys) == 2 and keys[0] == keys[1]
        async with AsyncQWEDClient(api_key=key, base_url=reset.url, max_retries=1) as c:
            with pytest.raises(APIConnectionError):
                await c.get_agent(a)
        assert len(reset.requests) == 2
        async with AsyncQWEDClient(api_key=key, base_url=hold.url, timeout=0.3, max_retries=0) as c:
            with pytest.raises(APITimeoutError):
                await c.get_agent(a)
        async with AsyncQWEDClient(api_key=key, base_url=closing.url, max_retries=0) as c:
            for _ in range(3):  # each pooled connection is closed by the server after its answer
                assert (await c.get_agent(a))["agent_id"] == a
        assert len(closing.requests) == 3

    try:
        asyncio.run(main())
    finally:
        for p in (lost, reset, hold, closing):
            p.close()
    with QWEDClient(api_key=key, base_url=gate.url) as c:
        assert c.get_agent(a)["total_actions"] == 1
