"""The framework hooks and offline attestations against the Kafka deployment.

A gate on ``agentgate dev-kafka`` (a Kafka-protocol broker in memory) answers
the same HTTP API from its Kafka log; the hooks' flows run there as on the
embedded log: LangChain's executor with attestations verified offline, a
refusal, a CrewAI task with its loop control, and executions logged.
"""

from __future__ import annotations

import re
import selectors
import subprocess
from typing import Iterator

import pytest

from conftest import Gate, _stop, gate_binary, running_gate
from hook_support import Recorder, activity, crewai_stand_in, langchain_stand_in, scripted
from qwed_sdk.attestation import SignatureError, verify_attestation
from qwed_sdk.crewai import QWEDVerifiedAgent, ToolCallDenied


@pytest.fixture(scope="module")
def kafka_gate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    root = tmp_path_factory.mktemp("kafka")
    with open(root / "dev-kafka.log", "wb") as log:
        broker = subprocess.Popen(
            [str(gate_binary()), "dev-kafka", "--listen", "127.0.0.1:0", "--data", ""],
            stdout=subprocess.PIPE, stderr=log,
        )  # fmt: skip
    try:
        assert broker.stdout is not None
        # The broker's first line names its address; wait for it with a deadline.
        with selectors.DefaultSelector() as sel:
            sel.register(broker.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=60)
        line = broker.stdout.readline().decode() if ready else ""
        m = re.search(r"listening on (\S+:\d+)", line)
        if not m:
            raise RuntimeError(f"dev-kafka did not start: {line!r}; see {root / 'dev-kafka.log'}")
        with running_gate(root, "--refusal-rate", "0", "--kafka-brokers", m.group(1)) as gate:
            yield gate
    finally:
        _stop(broker)


@pytest.fixture
def kafka_agent(kafka_gate: Gate) -> tuple[str, str]:
    return kafka_gate.register("org_kafka_hooks", allowed_tools=["search_web", "get_weather"])


def test_langchain_executor_with_attestations_on_kafka(kafka_gate, kafka_agent):
    with langchain_stand_in() as (module, tools, _):
        from langchain.agents import AgentExecutor

        agent_id, token = kafka_agent
        handler = module.QWEDVerificationCallback(
            agent_id=agent_id, agent_token=token, base_url=kafka_gate.url, require_attestation=True
        )
        seen = []
        record = handler.guard.record

        def recording(approval, success):
            seen.append(approval)
            return record(approval, success)

        handler.guard.record = recording
        weather, rocket = Recorder("sunny"), Recorder()
        agent_executor = AgentExecutor(
            agent=scripted([("get_weather", {"city": "Oslo"})], [("launch_rocket", {"now": True})]),
            tools=[tools.BaseTool("get_weather", weather), tools.BaseTool("launch_rocket", rocket)],
            callbacks=[handler],
        )
        with pytest.raises(module.ToolCallDenied) as info:
            agent_executor.run("Weather, then launch")
    assert info.value.code == "QWED-AGENT-004" and rocket.calls == []
    assert len(weather.calls) == 1
    [approval] = seen
    _, jwks = kafka_gate.request("GET", "/.well-known/jwks.json")
    claims = verify_attestation(approval.attestation, jwks)
    assert claims["jti"] == approval.action_id and claims["decision"] == "APPROVED"
    head, sig = approval.attestation.rsplit(".", 1)
    with pytest.raises(SignatureError):
        verify_attestation(head + "." + ("A" if sig[0] != "A" else "B") + sig[1:], jwks)
    [entry] = [a for a in activity(kafka_gate, agent_id, token) if a["action"].get("tool") == "get_weather"]
    assert entry["execution"]["success"] is True and entry["attestation_id"]


def test_crewai_task_on_kafka(kafka_gate, kafka_agent):
    agent_id, token = kafka_agent
    with crewai_stand_in() as (crewai, tools):
        search = Recorder("found")
        analyst = QWEDVerifiedAgent(
            role="Analyst", goal="Find", tools=[tools.Tool("search_web", search)],
            agent_id=agent_id, agent_token=token, base_url=kafka_gate.url,
        )  # fmt: skip
        same = [("search_web", {"query": "kafka"})]
        analyst.execute_task(crewai.Task("once", same))
        with pytest.raises(ToolCallDenied) as info:
            analyst.execute_task(crewai.Task("loop", same * 3))
    assert info.value.code == "QWED-AGENT-LOOP-003"
    assert len(search.calls) == 3
    done = [a for a in activity(kafka_gate, agent_id, token) if a["action"].get("tool") == "search_web"]
    assert sum(1 for a in done if a.get("execution", {}).get("success")) == 3
