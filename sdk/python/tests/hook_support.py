"""Helpers of the framework hooks' tests (test_langchain, test_crewai)."""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path
from typing import Any, Iterator

FAKES = Path(__file__).resolve().parent / "fake_frameworks"

# The public key of test_attestation's fixed test key: put behind the gate's
# kid, it makes every attestation of the gate fail to verify.
FOREIGN_X = "8mdTvyRIuHEx5hcRLs6iEt15iS0QT28rewaB7F20A1c"
FOREIGN_Y = "usWFQjLD8M6BycG4CGG_C2mQKu4HvTLuaPWQ-DEITIw"


def foreign_jwks(gate) -> dict[str, Any]:
    """The gate's JWKS with its key's coordinates replaced by FOREIGN_*."""
    _, jwks = gate.request("GET", "/.well-known/jwks.json")
    return {"keys": [dict(jwks["keys"][0], x=FOREIGN_X, y=FOREIGN_Y)]}


def activity(gate, agent_id: str, token: str) -> list[dict[str, Any]]:
    """The agent's activity log (its latest 100 entries), read with its token."""
    status, body = gate.request(
        "GET", f"/agents/{agent_id}/activity?limit=100",
        headers={"Authorization": f"Bearer {token}"},
    )  # fmt: skip
    assert status == 200, body
    return body["activities"]


class Recorder:
    """A tool body that records its calls: the proof a tool ran or not."""

    def __init__(self, result: Any = "ok", fail: bool = False) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.result = result
        self.fail = fail

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if self.fail:
            raise RuntimeError("tool failed")
        return self.result


@contextlib.contextmanager
def stand_ins(*packages: str) -> Iterator[None]:
    """The stand-ins of tests/fake_frameworks importable until the block
    ends, and qwed_sdk.langchain imported afresh over them (it picks its base
    class when imported); then neither."""
    sys.path.insert(0, str(FAKES))
    sys.modules.pop("qwed_sdk.langchain", None)
    try:
        yield
    finally:
        sys.path.remove(str(FAKES))
        for name in [n for n in sys.modules if n.split(".")[0] in packages]:
            del sys.modules[name]
        sys.modules.pop("qwed_sdk.langchain", None)


@contextlib.contextmanager
def langchain_stand_in() -> Iterator[tuple[Any, Any, Any]]:
    """(qwed_sdk.langchain, langchain_core.tools, langchain_core.callbacks)
    over the LangChain stand-ins."""
    with stand_ins("langchain", "langchain_core"):
        yield (
            importlib.import_module("qwed_sdk.langchain"),
            importlib.import_module("langchain_core.tools"),
            importlib.import_module("langchain_core.callbacks"),
        )


@contextlib.contextmanager
def crewai_stand_in() -> Iterator[tuple[Any, Any]]:
    """(crewai, crewai.tools): the CrewAI stand-ins."""
    with stand_ins("crewai"):
        yield importlib.import_module("crewai"), importlib.import_module("crewai.tools")


def scripted(*rounds: list[tuple[str, Any]]) -> Any:
    """A model's plan for the AgentExecutor stand-in, scripted: each round a
    list of (tool, input), then the finish."""
    from langchain_core.agents import AgentAction, AgentFinish

    todo = iter(rounds)

    def plan(steps: list) -> Any:
        actions = next(todo, None)
        if actions is None:
            return AgentFinish({"output": f"done after {len(steps)} steps"})
        return [AgentAction(tool, tool_input) for tool, tool_input in actions]

    return plan
