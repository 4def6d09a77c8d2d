"""qwed_sdk.langchain.QWEDVerificationCallback against a real gate.

LangChain cannot be installed here; tests/fake_frameworks/langchain_core
reproduces its documented callback interface and dispatch rule (see its
README), and the handler is exercised through it exactly as LangChain's
BaseTool.run drives handlers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from qwed_sdk import AuthenticationError, ValidationError
from qwed_sdk.attestation import AttestationError

from hook_support import Recorder, activity, foreign_jwks, langchain_stand_in, scripted

SDK_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def lc():
    """qwed_sdk.langchain over the LangChain stand-ins."""
    with langchain_stand_in() as modules:
        yield modules


@pytest.fixture
def agent(gate):
    """A fresh agent per test: the gate lowers the trust of an agent denied in more than 10% of
    its last 20+ decisions, and these tests are denied on purpose."""
    return gate.register("org_langchain", allowed_tools=["search_web", "read_database", "query_data", "get_weather"])


def handler_for(module, gate, agent, **options):
    agent_id, token = agent
    return module.QWEDVerificationCallback(agent_id=agent_id, agent_token=token, base_url=gate.url, **options)


def test_handler_subclasses_langchains_base_when_installed(lc):
    module, _, callbacks = lc
    assert module.LANGCHAIN_BASE is callbacks.BaseCallbackHandler
    assert issubclass(module.QWEDVerificationCallback, callbacks.BaseCallbackHandler)
    assert module.QWEDVerificationCallback.raise_error is True


def test_handler_stands_alone_without_langchain():
    code = (
        f"import sys; sys.path.insert(0, {str(SDK_ROOT)!r})\n"
        "import qwed_sdk.langchain as m\n"
        "assert m.LANGCHAIN_BASE is m._CallbackInterface\n"
        "h = m.QWEDVerificationCallback(agent_id='agent_x', agent_token='t')\n"
        "assert h.raise_error and not h.ignore_agent and h.on_llm_start({}, []) is None\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=SDK_ROOT, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.stdout.strip() == "ok", proc.stderr


def test_approved_tool_runs_and_its_execution_is_logged(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    body = Recorder(result="sunny")
    handler = handler_for(module, gate, agent)
    tool = tools.BaseTool("get_weather", body)
    assert tool.run({"city": "Paris"}, callbacks=[handler]) == "sunny"
    assert body.calls == [((), {"city": "Paris"})]
    entries = [a for a in activity(gate, agent_id, token)
               if a["action"].get("tool") == "get_weather"]  # fmt: skip
    assert len(entries) == 1
    assert entries[0]["decision"] == "APPROVED"
    assert entries[0]["action"]["parameters"] == {"city": "Paris"}
    assert entries[0]["execution"]["success"] is True


def test_unknown_tool_is_stopped_with_the_gates_code_and_reason(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    body = Recorder()
    handler = handler_for(module, gate, agent)
    with pytest.raises(module.ToolCallDenied) as info:
        tools.BaseTool("my_custom_tool", body).run("anything", callbacks=[handler])
    assert body.calls == []  # the tool never ran
    err = info.value
    assert err.code == "QWED-AGENT-004"
    assert err.decision == "DENIED"
    assert "requires explicit allowlisting" in err.reason
    assert err.tool_name == "my_custom_tool"
    assert err.action_id in {a["activity_id"] for a in activity(gate, agent_id, token)}


def test_a_handler_without_raise_error_would_not_stop_the_tool(gate, lc, agent):
    # Why raise_error is True: LangChain drops a handler's exception otherwise.
    module, tools, _ = lc
    handler = handler_for(module, gate, agent)
    handler.raise_error = False
    body = Recorder()
    tools.BaseTool("my_custom_tool", body).run("x", callbacks=[handler])
    assert len(body.calls) == 1


def test_pending_tool_is_stopped_with_its_approval(gate, lc, agent):
    module, tools, _ = lc
    body = Recorder()
    handler = handler_for(module, gate, agent)
    with pytest.raises(module.ToolCallDenied) as info:
        tools.BaseTool("send_email", body).run({"to": "a@example.com"}, callbacks=[handler])
    assert body.calls == []
    assert info.value.decision == "PENDING"
    assert info.value.approval_id


def test_the_gates_loop_control_applies_to_repeated_tool_calls(gate, lc, agent):
    module, tools, _ = lc
    body = Recorder()
    handler = handler_for(module, gate, agent)
    tool = tools.BaseTool("query_data", body)
    tool.run({"q": "same"}, callbacks=[handler])
    tool.run({"q": "same"}, callbacks=[handler])
    with pytest.raises(module.ToolCallDenied) as info:
        tool.run({"q": "same"}, callbacks=[handler])
    assert info.value.code == "QWED-AGENT-LOOP-003"
    assert len(body.calls) == 2
    tool.run({"q": "different"}, callbacks=[handler])  # a different action proceeds
    assert len(body.calls) == 3


def test_a_failing_tool_is_logged_as_failed(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    handler = handler_for(module, gate, agent)
    with pytest.raises(RuntimeError):
        tool = tools.BaseTool("read_database", Recorder(fail=True))
        tool.run({"table": "t"}, callbacks=[handler])
    entries = [a for a in activity(gate, agent_id, token)
               if a["action"].get("tool") == "read_database"]  # fmt: skip
    assert [e["execution"]["success"] for e in entries] == [False]


def test_require_attestation_verifies_offline_and_logs_with_it(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    handler = handler_for(module, gate, agent, require_attestation=True)
    seen = {}
    original = handler.guard.record

    def record(approval, success):
        seen["approval"] = approval
        return original(approval, success)

    handler.guard.record = record
    tool = tools.BaseTool("search_web", Recorder("found"))
    assert tool.run({"q": "att"}, callbacks=[handler]) == "found"
    approval = seen["approval"]
    assert approval.claims["jti"] == approval.action_id
    assert approval.claims["decision"] == "APPROVED"
    entry = next(a for a in activity(gate, agent_id, token)
                 if a["activity_id"] == approval.action_id)  # fmt: skip
    assert entry["attestation_id"]
    assert entry["execution"]["success"] is True


def test_an_attestation_that_does_not_verify_stops_the_tool(gate, lc, agent):
    module, tools, _ = lc
    handler = handler_for(module, gate, agent, require_attestation=True, jwks=foreign_jwks(gate))
    body = Recorder()
    with pytest.raises(AttestationError):
        tools.BaseTool("search_web", body).run({"q": "forged"}, callbacks=[handler])
    assert body.calls == []


def test_the_jwks_is_fetched_once_through_the_client(gate, lc, agent):
    # Verifying before the tool and logging with the attestation after it
    # both use the client's keys: one fetch for many calls.
    module, tools, _ = lc
    handler = handler_for(module, gate, agent, require_attestation=True)
    client = handler.guard.client
    fetches = []
    fetch = client.jwks
    client.jwks = lambda: fetches.append(1) or fetch()
    for i in range(3):
        tools.BaseTool("search_web", Recorder()).run({"q": f"jwks {i}"}, callbacks=[handler])
    assert len(fetches) == 1


def test_a_wrong_token_raises_the_clients_error_and_the_tool_does_not_run(gate, lc, agent):
    module, tools, _ = lc
    agent_id, _ = agent
    handler = module.QWEDVerificationCallback(agent_id=agent_id, agent_token="qwed_agent_wrong", base_url=gate.url)
    body = Recorder()
    with pytest.raises(AuthenticationError):
        tools.BaseTool("search_web", body).run({"q": "x"}, callbacks=[handler])
    assert body.calls == []


def test_the_token_is_not_in_repr_or_errors(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    handler = handler_for(module, gate, agent)
    assert token not in repr(handler) and token not in repr(handler.guard)
    with pytest.raises(module.ToolCallDenied) as info:
        tools.BaseTool("my_custom_tool", Recorder()).run("x", callbacks=[handler])
    assert token not in str(info.value) and token not in repr(info.value)
    assert token not in json.dumps(info.value.reply)


def test_only_the_named_tools_are_verified_when_asked(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    handler = handler_for(module, gate, agent, verify_tools=["search_web"])
    body = Recorder()
    tools.BaseTool("local_calculator", body).run("2+2", callbacks=[handler])  # not verified
    assert len(body.calls) == 1
    assert not [a for a in activity(gate, agent_id, token)
                if a["action"].get("tool") == "local_calculator"]  # fmt: skip


# --- through an agent executor ------------------------------------------------------


def tool_entries(gate, agent, tool: str) -> list[dict]:
    agent_id, token = agent
    return [a for a in activity(gate, agent_id, token) if a["action"].get("tool") == tool]


def test_seed_shape_constructor_callbacks_verify_every_action(gate, lc, agent):
    # The spec's shape: the handler in the executor's constructor callbacks.
    # LangChain does not pass those to the tools' runs; the handler verifies
    # at on_agent_action, which it does receive, before the tool runs.
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    weather, search = Recorder("sunny"), Recorder("found")
    agent_executor = AgentExecutor(
        agent=scripted([("get_weather", {"city": "Oslo"})], [("search_web", "customer data")]),
        tools=[tools.BaseTool("get_weather", weather), tools.BaseTool("search_web", search)],
        callbacks=[handler_for(module, gate, agent)],
    )
    assert agent_executor.run("Get customer data") == "done after 2 steps"
    assert len(weather.calls) == len(search.calls) == 1
    for tool, params in (("get_weather", {"city": "Oslo"}), ("search_web", {"input": "customer data"})):
        [entry] = tool_entries(gate, agent, tool)
        assert entry["action"]["parameters"] == params
        assert entry["decision"] == "APPROVED" and entry["execution"]["success"] is True


def test_constructor_callbacks_stop_a_refused_action_before_its_tool(gate, lc, agent):
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    weather, rocket = Recorder("sunny"), Recorder()
    agent_executor = AgentExecutor(
        agent=scripted([("get_weather", {"city": "Oslo"})], [("launch_rocket", {"now": True})]),
        tools=[tools.BaseTool("get_weather", weather), tools.BaseTool("launch_rocket", rocket)],
        callbacks=[handler_for(module, gate, agent)],
    )
    with pytest.raises(module.ToolCallDenied) as info:
        agent_executor.run("Launch")
    assert info.value.code == "QWED-AGENT-004" and rocket.calls == []
    [done] = tool_entries(gate, agent, "get_weather")
    assert done["execution"]["success"] is True  # settled when the next action came


def test_constructor_callbacks_record_a_failing_tool_as_failed(gate, lc, agent):
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    agent_executor = AgentExecutor(
        agent=scripted([("read_database", {"table": "t"})]),
        tools=[tools.BaseTool("read_database", Recorder(fail=True))],
        callbacks=[handler_for(module, gate, agent)],
    )
    with pytest.raises(RuntimeError):
        agent_executor.run("Read")
    [entry] = tool_entries(gate, agent, "read_database")
    assert entry["execution"]["success"] is False


def test_call_callbacks_verify_each_call_once(gate, lc, agent):
    # Passed to the call, the handler sees both on_agent_action and
    # on_tool_start for each call, and asks the gate once.
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    weather = Recorder("sunny")
    agent_executor = AgentExecutor(
        agent=scripted([("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"})]),
        tools=[tools.BaseTool("get_weather", weather)],
    )
    handler = handler_for(module, gate, agent)
    agent_executor.invoke({"input": "Weather"}, config={"callbacks": [handler]})
    assert len(weather.calls) == 2
    entries = tool_entries(gate, agent, "get_weather")
    assert sorted(e["action"]["parameters"]["city"] for e in entries) == ["Oslo", "Rome"]
    assert all(e["execution"]["success"] for e in entries)


def test_each_top_level_run_is_its_own_conversation(gate, lc, agent):
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    handler = handler_for(module, gate, agent)
    same = [("get_weather", {"city": "Oslo"})]
    weather = Recorder("sunny")
    for _ in range(3):  # one conversation across runs would make the third LOOP-003
        AgentExecutor(agent=scripted(same), tools=[tools.BaseTool("get_weather", weather)]).invoke(
            {"input": "Weather"}, config={"callbacks": [handler]}
        )
    assert len(weather.calls) == 3
    looping = AgentExecutor(agent=scripted(same, same, same), tools=[tools.BaseTool("get_weather", weather)])
    with pytest.raises(module.ToolCallDenied) as info:  # within one run it is
        looping.invoke({"input": "Weather"}, config={"callbacks": [handler]})
    assert info.value.code == "QWED-AGENT-LOOP-003"
    assert len(weather.calls) == 5
    assert not handler._roots  # the runs' bookkeeping is dropped when they end


def test_langchains_own_pseudo_tools_are_not_verified(gate, lc, agent):
    from langchain.agents import AgentExecutor

    module, tools, _ = lc
    parse_error = Recorder("Invalid format")
    agent_executor = AgentExecutor(
        agent=scripted([("_Exception", "Could not parse LLM output")]),
        tools=[tools.BaseTool("_Exception", parse_error)],
        callbacks=[handler_for(module, gate, agent)],
    )
    agent_executor.run("Anything")
    assert len(parse_error.calls) == 1
    assert tool_entries(gate, agent, "_Exception") == []


def test_parallel_tool_calls_reach_the_gate_in_step_order(gate, lc, agent):
    # Tools of one conversation run at once (as LangGraph's tool node runs
    # them): the handler sends their checks one at a time, so no step
    # overtakes an earlier one and none is refused as a replay.
    module, tools, _ = lc
    handler = handler_for(module, gate, agent)
    search = Recorder("found")
    start = threading.Barrier(8)
    errors = []

    def call(i: int) -> None:
        start.wait()
        try:
            tools.BaseTool("search_web", search).run({"q": f"parallel {i}"}, callbacks=[handler])
        except Exception as exc:  # collected: asserted below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(search.calls) == 8
    assert len(tool_entries(gate, agent, "search_web")) == 8


def test_an_input_the_gate_refuses_to_read_stops_the_tool(gate, lc, agent):
    # Over the gate's 1 MiB body limit: QWED-REQ-004 (413) is the client's
    # ValidationError, and no answer is no approval.
    module, tools, _ = lc
    handler = handler_for(module, gate, agent)
    body = Recorder()
    with pytest.raises(ValidationError) as info:
        tools.BaseTool("search_web", body).run({"q": "x" * (2 << 20)}, callbacks=[handler])
    assert info.value.code == "QWED-REQ-004" and body.calls == []


# --- human approval -------------------------------------------------------------------


def resolve_when_pending(gate, principal_id: str, agent_id: str, verdict: str) -> str:
    """Waits (with a deadline) for the agent's pending approval to appear,
    then approves or denies it as the principal; returns its id."""
    key = gate.principal_key(principal_id)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, body = gate.request("GET", "/approvals?status=pending", headers={"X-API-Key": key})
        mine = [a for a in body["approvals"] if a["agent_id"] == agent_id]
        if mine:
            approval_id = mine[0]["approval_id"]
            status, _ = gate.request(
                "POST", f"/approvals/{approval_id}/{verdict}", {"reason": "by the test"}, {"X-API-Key": key}
            )
            assert status == 200
            return approval_id
        time.sleep(0.02)
    raise AssertionError("no pending approval appeared")


def run_in_thread(fn):
    """Runs fn in a thread; returns a function that joins it and gives
    (result, exception)."""
    out = {}

    def target():
        try:
            out["result"] = fn()
        except Exception as exc:  # handed to the test
            out["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()

    def join():
        thread.join(60)
        assert not thread.is_alive()
        return out.get("result"), out.get("error")

    return join


def test_a_pending_call_waits_for_the_principal_and_runs_once_granted(gate, lc, agent):
    module, tools, _ = lc
    agent_id, token = agent
    handler = handler_for(module, gate, agent, wait_for_approval=30, approval_poll=0.05, require_attestation=True)
    body = Recorder("sent")
    join = run_in_thread(lambda: tools.BaseTool("send_email", body).run({"to": "a@example.com"}, callbacks=[handler]))
    approval_id = resolve_when_pending(gate, "org_langchain", agent_id, "approve")
    result, error = join()
    assert error is None and result == "sent" and len(body.calls) == 1
    [entry] = [a for a in activity(gate, agent_id, token) if a["activity_id"] == approval_id]
    assert entry["execution"]["success"] is True  # logged under the approved action


def test_a_pending_call_the_principal_denies_does_not_run(gate, lc, agent):
    module, tools, _ = lc
    agent_id, _ = agent
    handler = handler_for(module, gate, agent, wait_for_approval=30, approval_poll=0.05)
    body = Recorder()
    join = run_in_thread(lambda: tools.BaseTool("send_email", body).run({"to": "b@example.com"}, callbacks=[handler]))
    resolve_when_pending(gate, "org_langchain", agent_id, "deny")
    _, error = join()
    assert isinstance(error, module.ToolCallDenied) and body.calls == []
    assert error.decision == "PENDING" and error.approval_status == "denied"


def test_a_pending_call_nobody_resolves_is_refused_when_the_wait_ends(gate, lc, agent):
    module, tools, _ = lc
    handler = handler_for(module, gate, agent, wait_for_approval=0.2, approval_poll=0.05)
    body = Recorder()
    with pytest.raises(module.ToolCallDenied) as info:
        tools.BaseTool("send_email", body).run({"to": "c@example.com"}, callbacks=[handler])
    assert info.value.approval_status == "pending" and body.calls == []
