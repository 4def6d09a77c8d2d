"""LangChain integration: verify every tool call with the gate before it runs
(QWED-Agent spec v1.1 §9.2).

    from qwed_sdk.langchain import QWEDVerificationCallback

    agent_executor = AgentExecutor(
        agent=my_agent,
        tools=my_tools,
        callbacks=[QWEDVerificationCallback(agent_id="agent_xyz789", agent_token="qwed_agent_...")],
    )

:class:`QWEDVerificationCallback` is a LangChain callback handler
(``langchain_core.callbacks.BaseCallbackHandler``). Before a tool runs,
LangChain tells the handler, by ``on_agent_action`` (an agent executor
announcing the tool call) or ``on_tool_start`` (the tool's run starting);
the handler asks the gate (``POST /agents/{id}/tools/{tool}``) and, unless
the call is APPROVED, raises :class:`~qwed_sdk._guard.ToolCallDenied` with
the gate's code and reason. The handler sets ``raise_error = True``, so
LangChain's callback manager lets that exception out and the tool never runs
(a handler without it would only have the exception logged). The outcome is
recorded afterwards (``POST /agents/{id}/executions``). Each top-level run
is a conversation of its own, so the gate's loop controls apply within a
run and its 50-step cap to each run.

LangChain is imported here, not by ``qwed_sdk``: when ``langchain_core`` (or
the older ``langchain``) is installed the handler subclasses its
``BaseCallbackHandler``; when neither is, it subclasses a stand-in with the
same interface (the attributes and no-op methods of LangChain's callback
interface), so it can be driven by any caller of that interface.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Optional
from uuid import UUID

from ._guard import Approval, ToolCallDenied, ToolGuard

__all__ = ["QWEDVerificationCallback", "ToolCallDenied", "LANGCHAIN_BASE", "INTERNAL_TOOLS"]


class _CallbackInterface:
    """The interface of LangChain's BaseCallbackHandler, for when LangChain
    is not installed: its flags and a no-op for every event."""

    raise_error: bool = False
    run_inline: bool = False

    @property
    def ignore_llm(self) -> bool:
        return False

    @property
    def ignore_retry(self) -> bool:
        return False

    @property
    def ignore_chain(self) -> bool:
        return False

    @property
    def ignore_agent(self) -> bool:
        return False

    @property
    def ignore_retriever(self) -> bool:
        return False

    @property
    def ignore_chat_model(self) -> bool:
        return False

    @property
    def ignore_custom_event(self) -> bool:
        return False

    def _noop(self, *args: Any, **kwargs: Any) -> None:
        return None

    on_llm_start = on_chat_model_start = on_llm_new_token = on_llm_end = on_llm_error = _noop
    on_chain_start = on_chain_end = on_chain_error = _noop
    on_agent_action = on_agent_finish = _noop
    on_tool_start = on_tool_end = on_tool_error = _noop
    on_retriever_start = on_retriever_end = on_retriever_error = _noop
    on_text = on_retry = on_custom_event = _noop


def _langchain_base() -> type:
    """LangChain's BaseCallbackHandler if installed, else the stand-in."""
    try:
        from langchain_core.callbacks import BaseCallbackHandler

        return BaseCallbackHandler
    except ImportError:
        pass
    try:
        from langchain.callbacks.base import BaseCallbackHandler  # LangChain before 0.1

        return BaseCallbackHandler
    except ImportError:
        return _CallbackInterface


LANGCHAIN_BASE: type = _langchain_base()
"""The base class in use: LangChain's BaseCallbackHandler, or the stand-in."""


def _parameters(input_str: str, inputs: Optional[dict[str, Any]]) -> Any:
    """The tool call's parameters: LangChain's structured inputs when it
    passes them, else the input string (as JSON when it is a JSON object)."""
    if isinstance(inputs, dict):
        return inputs
    try:
        parsed = json.loads(input_str)
    except (TypeError, ValueError):
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"input": input_str}


INTERNAL_TOOLS = frozenset({"_Exception", "invalid_tool"})
"""LangChain's own pseudo-tools, which only hand the model an error message
(a parsing error, an unknown tool name): not verified."""

MAX_TRACKED_RUNS = 4096
"""Runs whose root a handler remembers; past it the oldest are forgotten."""


class QWEDVerificationCallback(LANGCHAIN_BASE):  # type: ignore[misc,valid-type]
    """A LangChain callback handler that verifies each tool call with the
    gate before the tool runs.

    Args:
        agent_id: the gate's id of the agent (``agent_…``).
        agent_token: its token; else ``client``'s credentials, else the
            ``AGENTGATE_AGENT_TOKEN`` environment variable.
        base_url: the gate (else ``AGENTGATE_URL``, else
            ``http://127.0.0.1:8080``), for the client made when none is
            given.
        client: a :class:`qwed_sdk.QWEDClient` to reuse.
        require_attestation: have each approval attested and verify the
            attestation offline (ES256 against the gate's JWKS) before the
            tool runs; the execution is logged with it.
        conversation_id: one conversation for every call; by default each
            top-level LangChain run (an ``AgentExecutor`` call, say) is its
            own conversation, ``lc_<its run id>``, and calls outside any
            run share the handler's.
        Other keywords go to :class:`~qwed_sdk._guard.ToolGuard`
        (``api_key``, ``jwks``, ``log_executions``, ``verify_tools``).

    LangChain tells a handler about a tool call twice when it can: an agent
    executor announces the action (``on_agent_action``, to the handlers of
    its own run, constructor callbacks included) and the tool's run starts
    (``on_tool_start``, to the handlers its run inherits: those passed to
    the call, not the executor's constructor callbacks). The handler
    verifies at the first it sees and not again at the second, so
    ``AgentExecutor(callbacks=[handler])`` and ``executor.invoke(...,
    config={"callbacks": [handler]})`` both verify every call once. When
    only the action is seen, the tool's outcome is taken from the
    executor's next event: another action or the finish (it returned), an
    error of the run (it failed).

    A refusal raises :class:`ToolCallDenied` (``.code``, ``.reason``,
    ``.decision``, ``.approval_id``); LangChain lets it out (``raise_error``)
    before the tool runs.
    """

    raise_error = True

    def __init__(
        self,
        agent_id: str,
        agent_token: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        client: Any = None,
        require_attestation: bool = False,
        conversation_id: Optional[str] = None,
        **guard_options: Any,
    ) -> None:
        super().__init__()
        self.guard = ToolGuard(
            agent_id, agent_token, base_url=base_url, client=client,
            require_attestation=require_attestation, conversation_id=conversation_id, **guard_options,
        )  # fmt: skip
        self._fixed_conversation = conversation_id is not None
        self._lock = threading.Lock()
        # The approvals of running tools, by the tool's run id.
        self._approved: dict[UUID, Approval] = {}
        # Approvals of announced actions whose tool has not been seen, by
        # the announcing run's id.
        self._announced: dict[UUID, Approval] = {}
        # Each chain run's root run (for the conversation).
        self._roots: dict[UUID, UUID] = {}

    @property
    def agent_id(self) -> str:
        return self.guard.agent_id

    def __repr__(self) -> str:
        return f"QWEDVerificationCallback(agent_id={self.agent_id!r})"

    # --- conversations: one per top-level run ---------------------------------

    def _conversation(self, run_id: Optional[UUID]) -> Optional[str]:
        if self._fixed_conversation or run_id is None:
            return None
        with self._lock:
            root = self._roots.get(run_id)
        return None if root is None else f"lc_{root}"

    def on_chain_start(
        self,
        serialized: Optional[dict[str, Any]],
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: Optional[UUID] = None,
        **kwargs: Any,
    ) -> None:
        """Remembers the run's root."""
        with self._lock:
            root = run_id if parent_run_id is None else self._roots.get(parent_run_id, parent_run_id)
            while len(self._roots) >= MAX_TRACKED_RUNS:
                del self._roots[next(iter(self._roots))]
            self._roots[run_id] = root

    def _chain_done(self, run_id: UUID, success: bool) -> None:
        self._settle(run_id, success)
        with self._lock:
            root = self._roots.pop(run_id, None)
            if root is not None and root == run_id:
                for child in [r for r, v in self._roots.items() if v == root]:
                    del self._roots[child]
        if root == run_id and not self._fixed_conversation:
            self.guard.end_conversation(f"lc_{root}")

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: Optional[UUID] = None, **kwargs: Any) -> None:
        """Settles an announced action (its tool returned); forgets a root's conversation."""
        self._chain_done(run_id, True)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: Optional[UUID] = None, **kwargs: Any
    ) -> None:
        """Settles an announced action as failed; forgets a root's conversation."""
        self._chain_done(run_id, False)

    # --- the agent's actions ----------------------------------------------------

    def _settle(self, run_id: UUID, success: bool) -> None:
        """Records the outcome of the action run_id announced, if its tool
        was never seen."""
        with self._lock:
            approval = self._announced.pop(run_id, None)
        if approval is not None:
            self.guard.record(approval, success)

    def on_agent_action(
        self, action: Any, *, run_id: UUID, parent_run_id: Optional[UUID] = None, **kwargs: Any
    ) -> None:
        """Verifies the announced tool call before the executor runs the
        tool; raises ToolCallDenied unless the gate approves it."""
        self._settle(run_id, True)  # the run's previous action returned
        name = getattr(action, "tool", None)
        if not isinstance(name, str) or name in INTERNAL_TOOLS or not self.guard.covers(name):
            return
        tool_input = getattr(action, "tool_input", "")
        inputs = tool_input if isinstance(tool_input, dict) else None
        approval = self.guard.check(name, _parameters(str(tool_input), inputs), self._conversation(run_id))
        with self._lock:
            self._announced[run_id] = approval

    def on_agent_finish(
        self, finish: Any, *, run_id: UUID, parent_run_id: Optional[UUID] = None, **kwargs: Any
    ) -> None:
        """Settles the last announced action: its tool returned."""
        self._settle(run_id, True)

    # --- the tools ----------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: Optional[dict[str, Any]],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: Optional[UUID] = None,
        tags: Optional[list[str]] = None,
        metadata: Optional[dict[str, Any]] = None,
        inputs: Optional[dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        """Verifies the call before the tool runs (unless its action was
        verified when announced); raises ToolCallDenied unless the gate
        approves it."""
        name = (serialized or {}).get("name") or kwargs.get("name")
        if not name:
            raise ValueError("on_tool_start without a tool name (serialized['name'] or name=)")
        with self._lock:
            announced = self._announced.get(parent_run_id) if parent_run_id is not None else None
            if announced is not None and announced.tool_name == name:
                del self._announced[parent_run_id]  # type: ignore[arg-type]
                self._approved[run_id] = announced
                return
        if name in INTERNAL_TOOLS or not self.guard.covers(name):
            return
        approval = self.guard.check(name, _parameters(input_str, inputs), self._conversation(parent_run_id))
        with self._lock:
            self._approved[run_id] = approval

    def _finish(self, run_id: UUID, success: bool) -> None:
        with self._lock:
            approval = self._approved.pop(run_id, None)
        if approval is not None:
            self.guard.record(approval, success)

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: Optional[UUID] = None, **kwargs: Any) -> None:
        """Records the approved call's success."""
        self._finish(run_id, True)

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: Optional[UUID] = None,
        **kwargs: Any,
    ) -> None:
        """Records the approved call's failure."""
        self._finish(run_id, False)
