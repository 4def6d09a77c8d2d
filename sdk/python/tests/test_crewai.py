"""qwed_sdk.crewai.QWEDVerifiedAgent against a real gate.

CrewAI cannot be installed here; tests/fake_frameworks/crewai reproduces the
parts of its interface the wrapper relies on (Agent.tools, BaseTool.run ->
_run, the structured tool whose func is _run, Tool._run -> func; see its
README).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from qwed_sdk.attestation import AttestationError
from qwed_sdk.crewai import QWEDVerifiedAgent, ToolCallDenied, verify_tools

from hook_support import Recorder, activity, crewai_stand_in, foreign_jwks

SDK_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def crewai():
    """The CrewAI stand-ins, importable while the module's tests run."""
    with crewai_stand_in() as modules:
        yield modules


@pytest.fixture
def agent(gate):
    """A fresh agent per test: the gate lowers the trust of an agent denied in more than 10% of
    its last 20+ decisions, and these tests are denied on purpose."""
    return gate.register("org_crewai", allowed_tools=["search_web", "read_database", "get_weather"])


class SearchTool:
    """A CrewAI-style tool class (BaseTool subclass with _run)."""

    def __new__(cls, base, body):
        class _Search(base):
            name = "search_web"
            description = "search"

            def _run(self, query: str) -> str:
                return body(query=query)

        return _Search()


def settings(gate, agent, **extra):
    agent_id, token = agent
    return {"agent_id": agent_id, "agent_token": token, "base_url": gate.url, **extra}


def test_seed_shape_agent_and_qwed_settings(gate, crewai, agent):
    module, tools = crewai
    search, drop = Recorder("results"), Recorder()
    researcher = module.Agent(
        role="Researcher", goal="Find facts", backstory="b",
        tools=[SearchTool(tools.BaseTool, search), tools.Tool("delete_files", drop)],
    )  # fmt: skip
    verified = QWEDVerifiedAgent(
        agent=researcher,
        qwed_settings=settings(gate, agent, verify_all_tools=True, require_attestation=True),
    )
    assert verified is researcher  # the agent itself, so a Crew takes it as any agent
    assert verified.use("search_web", query="gate") == "results"  # CrewAI's executor path
    assert verified.tools[0].run(query="again") == "results"  # BaseTool.run path
    assert len(search.calls) == 2
    with pytest.raises(ToolCallDenied) as info:
        verified.use("delete_files", path="/")
    assert drop.calls == []
    assert info.value.decision == "DENIED"
    assert info.value.code == "QWED-AGENT-TRUST-001"
    agent_id, token = agent
    done = [a for a in activity(gate, agent_id, token) if a["action"].get("tool") == "search_web"]
    assert {a["action"]["parameters"]["query"] for a in done} == {"gate", "again"}
    assert all(a["execution"]["success"] and a["attestation_id"] for a in done)


def test_seed_shape_role_goal_agent_id_builds_a_crewai_agent(gate, crewai, agent):
    module, tools = crewai
    weather = Recorder("sunny")
    agent_id, token = agent
    analyst = QWEDVerifiedAgent(
        role="Analyst", goal="Analyze data", agent_id=agent_id, agent_token=token,
        base_url=gate.url, tools=[tools.Tool("get_weather", weather)],
    )  # fmt: skip
    assert isinstance(analyst, module.Agent)
    assert (analyst.role, analyst.goal) == ("Analyst", "Analyze data")
    assert analyst.backstory  # CrewAI requires one: a default is given
    assert analyst.use("get_weather", city="Oslo") == "sunny"
    assert weather.calls == [((), {"city": "Oslo"})]


def test_role_goal_without_crewai_says_what_to_do(gate, agent, monkeypatch):
    monkeypatch.setitem(sys.modules, "crewai", None)  # import crewai fails
    with pytest.raises(ImportError, match="crewai is not installed"):
        QWEDVerifiedAgent(role="Analyst", goal="Analyze data", **settings(gate, agent))


def test_any_object_with_tools_is_wrapped_without_crewai(gate, agent):
    fetch, unknown = Recorder({"rows": 1}), Recorder()
    plain = SimpleNamespace(tools=[
        SimpleNamespace(name="read_database", func=fetch),
        SimpleNamespace(name="launch_rocket", run=unknown),
    ])  # fmt: skip
    QWEDVerifiedAgent(agent=plain, qwed_settings=settings(gate, agent))
    assert plain.tools[0].func(table="orders") == {"rows": 1}
    with pytest.raises(ToolCallDenied) as info:
        plain.tools[1].run("now")
    assert unknown.calls == []
    assert info.value.code == "QWED-AGENT-004"


def test_a_failing_tool_is_logged_as_failed_and_reraised(gate, crewai, agent):
    _, tools = crewai
    tool = tools.Tool("read_database", Recorder(fail=True))
    verify_tools([tool], **settings(gate, agent))
    with pytest.raises(RuntimeError, match="tool failed"):
        tool.run(table="broken")
    agent_id, token = agent
    entry = next(a for a in activity(gate, agent_id, token)
                 if a["action"].get("parameters") == {"table": "broken"})  # fmt: skip
    assert entry["decision"] == "APPROVED" and entry["execution"]["success"] is False


def test_wrapping_twice_verifies_once(gate, crewai, agent):
    _, tools = crewai
    body = Recorder()
    tool = tools.Tool("get_weather", body)
    verify_tools([tool], **settings(gate, agent))
    verify_tools([tool], **settings(gate, agent))
    tool.run(city="Rome")
    agent_id, token = agent
    rome = [a for a in activity(gate, agent_id, token)
            if a["action"].get("parameters") == {"city": "Rome"}]  # fmt: skip
    assert len(rome) == 1 and len(body.calls) == 1


def test_only_listed_tools_are_verified_when_verify_all_tools_is_false(gate, crewai, agent):
    _, tools = crewai
    local, remote = Recorder(4), Recorder()
    plain = SimpleNamespace(tools=[tools.Tool("calculator", local), tools.Tool("drop_table", remote)])
    QWEDVerifiedAgent(
        agent=plain,
        qwed_settings=settings(gate, agent, verify_all_tools=False, verify_tools=["drop_table"]),
    )
    assert plain.tools[0].run("2+2") == 4  # unchecked
    with pytest.raises(ToolCallDenied):
        plain.tools[1].run(table="users")
    assert remote.calls == []


def test_a_forged_attestation_stops_the_tool(gate, crewai, agent):
    _, tools = crewai
    body = Recorder()
    tool = tools.Tool("search_web", body)
    verify_tools([tool], **settings(gate, agent, require_attestation=True, jwks=foreign_jwks(gate)))
    with pytest.raises(AttestationError):
        tool.run(query="forged")
    assert body.calls == []


def test_bad_settings_are_refused(gate, agent):
    plain = SimpleNamespace(tools=[])
    with pytest.raises(TypeError, match="unknown qwed settings"):
        QWEDVerifiedAgent(agent=plain, qwed_settings=settings(gate, agent, verify_al_tools=True))
    with pytest.raises(ValueError, match="agent_id is required"):
        QWEDVerifiedAgent(agent=plain, qwed_settings={"base_url": gate.url})
    with pytest.raises(TypeError, match="agent= or role= and goal="):
        QWEDVerifiedAgent(**settings(gate, agent))
    with pytest.raises(TypeError, match="no tools list"):
        QWEDVerifiedAgent(agent=object(), qwed_settings=settings(gate, agent))


def test_each_task_is_its_own_conversation_and_brings_its_tools_under_the_gate(gate, crewai, agent):
    module, tools = crewai
    weather, rocket = Recorder("sunny"), Recorder()
    analyst = QWEDVerifiedAgent(
        role="Analyst", goal="Analyze data", tools=[tools.Tool("get_weather", weather)], **settings(gate, agent)
    )
    same = [("get_weather", {"city": "Lima"})]
    for _ in range(3):  # one conversation across tasks would make the third LOOP-003
        analyst.execute_task(module.Task("forecast", same))
    assert len(weather.calls) == 3
    with pytest.raises(ToolCallDenied) as info:  # within one task it is
        analyst.execute_task(module.Task("loop", same * 3))
    assert info.value.code == "QWED-AGENT-LOOP-003"
    launch = module.Task("launch", [("launch_rocket", {"now": True})], tools=[tools.Tool("launch_rocket", rocket)])
    with pytest.raises(ToolCallDenied) as info:
        analyst.execute_task(launch, tools=launch.tools)  # as Crew passes a task's own tools
    assert info.value.code == "QWED-AGENT-004" and rocket.calls == []


PYDANTIC_TOOLS = """
import json, os, sys
sys.path.insert(0, os.environ["SDK_ROOT"])
from pydantic import BaseModel, ConfigDict
from qwed_sdk.crewai import ToolCallDenied, verify_tools

calls = []

class StructuredTool:
    def __init__(self, name, func):
        self.name, self.func = name, func

class BaseTool(BaseModel):  # as crewai.tools.BaseTool: a pydantic model; run calls _run
    model_config = ConfigDict(arbitrary_types_allowed=True)
    name: str
    description: str
    def run(self, *args, **kwargs):
        return self._run(*args, **kwargs)
    def _run(self, *args, **kwargs):
        raise NotImplementedError
    def to_structured_tool(self):
        return StructuredTool(self.name, self._run)

class Search(BaseTool):
    def _run(self, query: str) -> str:
        calls.append(query)
        return "found " + query

class RunOnly(BaseModel):  # a model with run and no _run: "run" is no field, pydantic refuses setattr
    name: str
    def run(self, query: str) -> str:
        calls.append(query)
        return "ran " + query

search, rocket = Search(name="search_web", description="s"), Search(name="launch_rocket", description="r")
plain = RunOnly(name="search_web")
verify_tools([search, rocket, plain], agent_id=os.environ["AGENT_ID"], agent_token=os.environ["AGENT_TOKEN"],
             base_url=os.environ["AGENTGATE_URL"])
out = {"run": search.run(query="p1"), "structured": search.to_structured_tool().func(query="p2"),
       "dump": search.model_dump(), "copy": search.model_copy().run(query="p3"), "plain": plain.run(query="p4")}
try:
    rocket.run(query="now")
except ToolCallDenied as exc:
    out["refused"] = exc.code
out["calls"] = calls
print(json.dumps(out))
"""


def _python_with_pydantic_2() -> str | None:
    for cand in (sys.executable, shutil.which("python3")):
        if (
            cand
            and subprocess.run([cand, "-c", "import pydantic, sys; sys.exit(pydantic.VERSION[0] != '2')"]).returncode
            == 0
        ):
            return cand
    return None


def test_tools_that_are_pydantic_models_are_wrapped(gate, agent):
    # CrewAI's tools are pydantic (v2) models, which refuse assignments to
    # names that are not fields; the wrapper sets attributes the way such a
    # model allows, and the model's fields stay as they were.
    python = _python_with_pydantic_2()
    if python is None:
        pytest.skip("no interpreter here has pydantic 2")
    agent_id, token = agent
    env = dict(os.environ, SDK_ROOT=str(SDK_ROOT), AGENT_ID=agent_id, AGENT_TOKEN=token, AGENTGATE_URL=gate.url)
    proc = subprocess.run([python, "-c", PYDANTIC_TOOLS], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {
        "run": "found p1",
        "structured": "found p2",
        "dump": {"name": "search_web", "description": "s"},
        "copy": "found p3",
        "plain": "ran p4",
        "refused": "QWED-AGENT-004",
        "calls": ["p1", "p2", "p3", "p4"],
    }
    queries = [a["action"]["parameters"].get("query") for a in activity(gate, agent_id, token)]
    assert {"p1", "p2", "p3", "p4", "now"} <= set(queries)


def test_wait_for_approval_reaches_the_guard(gate, crewai, agent):
    _, tools = crewai
    body = Recorder()
    tool = tools.Tool("send_email", body)
    verify_tools([tool], **settings(gate, agent, wait_for_approval=0.2))
    with pytest.raises(ToolCallDenied) as info:  # medium risk for a supervised agent: PENDING, nobody grants it
        tool.run(to="a@example.com")
    assert info.value.approval_status == "pending" and body.calls == []
