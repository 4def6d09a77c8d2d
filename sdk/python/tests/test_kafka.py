"""The clients against the Kafka deployment: a gate on agentgate dev-kafka
answers the same HTTP API from its Kafka log. The seeds' flow, decisions
as results, approvals, attestations, errors with their codes, and a write
whose answer is lost retried with its Idempotency-Key, sync and async."""

from __future__ import annotations

import asyncio

import pytest

from flaky_proxy import DROP_ANSWER, RELAY, FlakyProxy
from test_hooks_kafka import kafka_gate  # noqa: F401 (the Kafka deployment's gate fixture)
from qwed_sdk import (
    AsyncQWEDAgentClient,
    AuthenticationError,
    NotFoundError,
    QWEDAgentClient,
    QWEDClient,
    ValidationError,
)


@pytest.fixture(scope="module")
def principal(kafka_gate):  # noqa: F811
    with QWEDClient(api_key=kafka_gate.admin_key, base_url=kafka_gate.url) as admin:
        return admin.issue_principal_key("org_kafka_sdk")["api_key"]


def test_agent_flow_on_kafka(kafka_gate, principal):  # noqa: F811
    agent = QWEDAgentClient.register(
        name="KafkaAgent",
        principal_id="org_kafka_sdk",
        permissions={"allowed_engines": ["math", "sql"], "allowed_tools": ["send_email"]},
        budget={"max_daily_cost_usd": 50.00},
        api_key=principal,
        base_url=kafka_gate.url,
    )
    with agent, QWEDClient(api_key=principal, base_url=kafka_gate.url) as org:
        result = agent.verify_action(
            {"type": "execute_sql", "query": "SELECT id FROM orders"}, options={"require_attestation": True}
        )
        assert result.decision == "APPROVED" and result.verified_query == "SELECT id FROM orders"
        claims = agent.verify_attestation(result.attestation)
        assert claims["jti"] == result.action_id
        assert agent.log_execution(action_id=result.action_id, success=True, attestation=result.attestation)["logged"]

        for _ in range(2):
            assert agent.verify_action({"type": "calculate", "query": "2+2"}).decision == "APPROVED"
        loop = agent.verify_action({"type": "calculate", "query": "2+2"})
        assert loop["decision"] == "DENIED" and loop["error"]["code"] == "QWED-AGENT-LOOP-003"

        pending = agent.verify_tool_call("send_email", {"to": "user@example.com"})
        assert pending.decision == "PENDING"
        assert org.approve(pending.approval.approval_id, "ok").approval.status == "approved"
        assert agent.get_approval(pending.approval.approval_id)["status"] == "approved"

        entries = list(org.iter_agent_activity(agent.agent_id, page_size=2))
        assert len(entries) == 5 and entries[0]["activity_id"] == result.action_id
        assert org.get_agent_budget(agent.agent_id)["budget"]["cost"]["max_daily_usd"] == 50

        with pytest.raises(NotFoundError) as e:
            org.get_agent("agent_missing")
        assert e.value.code == "QWED-AGENT-001"
        with pytest.raises(ValidationError) as e:
            org.verify_action(agent.agent_id, {"type": "calculate", "query": "1"})
        assert e.value.code == "QWED-AGENT-CTX-001"
    with pytest.raises(AuthenticationError) as e:
        QWEDClient(api_key="qwed_key_wrong", base_url=kafka_gate.url).get_agent(agent.agent_id)
    assert e.value.code == "QWED-AUTH-002"


def test_a_lost_answer_is_replayed_from_the_kafka_log(kafka_gate, principal):  # noqa: F811
    with QWEDClient(api_key=principal, base_url=kafka_gate.url) as org:
        agent = org.register_agent(
            name="Retrier", principal_id="org_kafka_sdk", permissions={"allowed_engines": ["math"]}
        )
    proxy = FlakyProxy(kafka_gate.url, lambda i: DROP_ANSWER if i == 0 else RELAY)
    try:
        with QWEDClient(api_key=principal, base_url=proxy.url, max_retries=2) as c:
            d = c.verify_action(
                agent.agent_id, {"type": "calculate", "query": "5*5"}, {"conversation_id": "k", "step_number": 1}
            )
        assert d.decision == "APPROVED"
        keys = [r.get("idempotency-key") for r in proxy.requests]
        assert len(keys) == 2 and keys[0] == keys[1]
    finally:
        proxy.close()
    with QWEDClient(api_key=principal, base_url=kafka_gate.url) as org:
        assert [e["activity_id"] for e in org.get_agent_activity(agent.agent_id)] == [d.action_id]


def test_async_agent_on_kafka(kafka_gate, principal):  # noqa: F811
    async def main() -> None:
        agent = await AsyncQWEDAgentClient.register(
            name="AsyncKafka", principal_id="org_kafka_sdk", permissions={"allowed_engines": ["math"]},
            api_key=principal, base_url=kafka_gate.url,
        )  # fmt: skip
        async with agent:
            d = await agent.verify_action({"type": "calculate", "query": "6*7"}, options={"require_attestation": True})
            assert d.decision == "APPROVED"
            assert (await agent.log_execution(action_id=d.action_id, success=True, attestation=d.attestation))["logged"]
            assert [e["decision"] async for e in agent.client.iter_agent_activity(agent.agent_id)] == ["APPROVED"]

    asyncio.run(main())
