"""Stand-in for langchain.agents.AgentExecutor's callback flow.

Callbacks given to the constructor are the executor run's own (local)
handlers; callbacks given to a call are the run's too and are inherited by
its child runs, the tools. The run: on_chain_start; for each step the agent
plans, per action on_agent_action then the tool's run (a child run); then
on_agent_finish and on_chain_end, or on_chain_error and the exception.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

from langchain_core.agents import AgentAction, AgentFinish
from langchain_core.callbacks import CallbackManager, handle_event

__all__ = ["AgentExecutor", "AgentAction", "AgentFinish"]


class AgentExecutor:
    def __init__(self, agent: Callable[[list], Any], tools: list, callbacks: Optional[list] = None) -> None:
        self.agent = agent  # the model's plan: steps so far -> [AgentAction] or AgentFinish
        self.tools = {t.name: t for t in tools}
        self.callbacks = list(callbacks or [])

    def invoke(self, inputs: dict[str, Any], config: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        inheritable = list((config or {}).get("callbacks") or [])
        handlers = self.callbacks + inheritable
        run_id = uuid.uuid4()
        handle_event(handlers, "on_chain_start", "ignore_chain", {"name": "AgentExecutor"}, inputs, run_id=run_id)
        try:
            steps: list = []
            while True:
                plan = self.agent(steps)
                if isinstance(plan, AgentFinish):
                    handle_event(handlers, "on_agent_finish", "ignore_agent", plan, run_id=run_id)
                    break
                for action in plan:
                    handle_event(handlers, "on_agent_action", "ignore_agent", action, run_id=run_id)
                    child = CallbackManager(inheritable, parent_run_id=run_id)
                    steps.append((action, self.tools[action.tool].run(action.tool_input, callbacks=child)))
        except BaseException as exc:
            handle_event(handlers, "on_chain_error", "ignore_chain", exc, run_id=run_id)
            raise
        handle_event(handlers, "on_chain_end", "ignore_chain", plan.return_values, run_id=run_id)
        return dict(inputs, **plan.return_values)

    def run(self, text: str, callbacks: Optional[list] = None) -> Any:
        return self.invoke({"input": text}, {"callbacks": callbacks})["output"]
