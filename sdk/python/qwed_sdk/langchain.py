"""LangChain integration: verify every tool call with the gate before it runs
(QWED-Agent spec v1.1 §9.2).

    from qwed_sdk.langchain import QWEDVerificationCallback

    agent_executor = AgentExecutor(
        agent=my_agent,
        tools=my_tools,
        callbacks=[QWEDVerificationCallback(agent_id="agent_xyz789", agent_token="qwed_agent_...")],
    )

:class:`QWEDVerificationCallback` is a LangChain callback handler
(``langchain_core.callbacks.BaseCallbackHandler``). LangChain calls
``on_tool_start`` before a tool runs; the handler asks the gate
(``POST /agents/{id}/tools/{tool}``) and, unless the call is APPROVED, raises
:class:`~qwed_sdk._guard.ToolCallDenied` with the gate's code and reason.
The handler sets ``raise_error = True``, so LangChain's callback manager lets
that exception out of ``BaseTool.run`` and the tool never runs (a handler
without it would only have the exception logged). ``on_tool_end`` and
``on_tool_error`` record the outcome (``POST /agents/{id}/executions``).

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

__all__ = ["QWEDVerificationCallback", "ToolCallDenied", "LANGCHAIN_BASE"]


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
        Other keywords go to :class:`~qwed_sdk._guard.ToolGuard`
        (``api_key``, ``jwks``, ``conversation_id``, ``log_executions``,
        ``verify_tools``).

    A refusal raises :class:`ToolCallDenied` (``.code``, ``.reason``,
    ``.decision``, ``.approval_id``) out of the tool's ``run``.
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
        **guard_options: Any,
    ) -> None:
        super().__init__()
        self.guard = ToolGuard(
            agent_id, agent_token, base_url=base_url, client=client,
            require_attestation=require_attestation, **guard_options,
        )  # fmt: skip
        self._approved: dict[UUID, Approval] = {}
        self._lock = threading.Lock()

    @property
    def agent_id(self) -> str:
        return self.guard.agent_id

    def __repr__(self) -> str:
        return f"QWEDVerificationCallback(agent_id={self.agent_id!r})"

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
        """Verifies the call before the tool runs; raises ToolCallDenied
        unless the gate approves it."""
        name = (serialized or {}).get("name") or kwargs.get("name")
        if not name:
            raise ValueError("on_tool_start without a tool name (serialized['name'] or name=)")
        if not self.guard.covers(name):
            return
        approval = self.guard.check(name, _parameters(input_str, inputs))
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
