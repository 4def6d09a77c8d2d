"""The tool guard shared by the framework hooks (qwed_sdk.langchain,
qwed_sdk.crewai): ask the gate about a tool call before the tool runs, refuse
anything but APPROVED, and record the tool's outcome afterwards.

A call is verified at ``POST /agents/{id}/tools/{tool}`` (QWED-Agent spec
v1.1 §5.1) with a context of a conversation and its next step number, so the
gate's loop and replay controls apply to the framework's tool calls as they
do to ``verify_action``. The decision:

- ``APPROVED``: the tool may run. With ``require_attestation`` the reply must
  carry an attestation, which is verified offline against the gate's JWKS
  (``QWEDClient.verify_attestation``: the client's keys, fetched once and
  again if a kid is unknown, the ones log_execution checks the token with
  too) and must name this action, this agent and APPROVED; otherwise the tool
  does not run (:class:`AttestationError`).
- ``PENDING`` with ``wait_for_approval``: the guard polls the approval until
  a principal resolves it or the wait runs out; granted, the tool runs as the
  approved action (with ``require_attestation``, the attestation of the
  PENDING decision is verified offline and the grant is read from the gate).
- anything else (``DENIED``, ``PENDING``, ``BUDGET_EXCEEDED``, …) raises
  :class:`ToolCallDenied` carrying the gate's code and reason, and the tool
  does not run. Errors of the call itself (gate unreachable, bad token)
  propagate as the client's :class:`QWEDError` subclasses: no answer is no
  approval.

After the tool, :meth:`ToolGuard.record` logs the execution (``POST
/agents/{id}/executions``) with its success and the attestation. A failure to
log is reported through the ``qwed_sdk`` logger and does not turn the tool's
result into an error: the tool has run by then.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from .attestation import AttestationError, KeySet
from .errors import QWEDError

__all__ = ["ToolCallDenied", "ToolGuard", "Approval", "AGENT_TOKEN_ENV", "MAX_CONVERSATIONS"]

log = logging.getLogger("qwed_sdk")

AGENT_TOKEN_ENV = "AGENTGATE_AGENT_TOKEN"
"""The environment variable read for the agent token when a hook is given
neither a token nor a client."""


class ToolCallDenied(QWEDError):
    """The gate did not approve a tool call, so the tool did not run.

    Attributes (besides QWEDError's ``code``, ``message``, ``details``):
        decision: the gate's decision (``DENIED``, ``PENDING``,
            ``BUDGET_EXCEEDED``, …).
        tool_name: the tool that was refused.
        action_id: the gate's id of the decision (its activity log entry).
        approval_id: for ``PENDING``, the approval a principal may grant
            (``QWEDClient.approve``); a guard with ``wait_for_approval``
            waits for it and runs the tool once it is granted.
        approval_status: for ``PENDING``, the approval's status when the
            guard gave up waiting (``pending``, ``denied``, ``expired``), or
            None when it did not wait.
        reply: the gate's whole answer.
    """

    def __init__(self, tool_name: str, reply: Mapping[str, Any], approval_status: Optional[str] = None) -> None:
        decision = str(reply.get("decision") or "UNKNOWN")
        error = reply.get("error") if isinstance(reply.get("error"), Mapping) else {}
        approval = reply.get("approval") if isinstance(reply.get("approval"), Mapping) else {}
        reason = error.get("message") or approval.get("summary") or f"decision {decision}"
        if approval_status is not None:
            reason = f"approval {approval_status}: {reason}"
        code = error.get("code") or ""
        super().__init__(
            f"tool {tool_name!r} was not approved: {decision}: {reason}",
            code=code,
            details=error.get("details") or {},
            body=dict(reply),
        )
        self.decision = decision
        self.reason = reason
        self.tool_name = tool_name
        self.action_id: Optional[str] = reply.get("action_id")
        self.approval_id: Optional[str] = approval.get("approval_id")
        self.approval_status = approval_status
        self.reply = dict(reply)


MAX_CONVERSATIONS = 1024
"""Conversations whose step count a guard keeps; past it the oldest is
forgotten (its next call would start again at step 1 and be refused as a
replay, so keep this above the conversations alive at once)."""


class _Conversation:
    """A conversation's last step number, and the lock that sends its calls
    one at a time."""

    __slots__ = ("lock", "step")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.step = 0


@dataclass
class Approval:
    """An approved tool call: what :meth:`ToolGuard.record` needs afterwards."""

    tool_name: str
    action_id: str
    attestation: Optional[str] = None
    claims: dict[str, Any] = field(default_factory=dict)


def _json_parameters(value: Any) -> Any:
    """The tool's input as JSON the gate can fingerprint: values JSON lacks
    (objects, bytes) become their str()."""
    return json.loads(json.dumps(value, default=str))


class ToolGuard:
    """Verifies tool calls of one agent with the gate.

    Args:
        agent_id: the agent whose tool calls these are.
        agent_token: its token; else the client's credentials, else the
            ``AGENTGATE_AGENT_TOKEN`` environment variable.
        base_url, api_key: for the client made when none is given (base_url
            else AGENTGATE_URL else http://127.0.0.1:8080; api_key else
            AGENTGATE_API_KEY: a principal key may verify its agents' calls).
        client: a :class:`qwed_sdk.QWEDClient` to use (not closed by the
            guard).
        require_attestation: ask for an attestation on every approval and
            verify it offline before the tool runs.
        jwks: the gate's JWKS (a document or a KeySet) to verify against;
            by default the client's (``QWEDClient.verify_attestation``:
            fetched on first use, again when the gate rotates its key).
        conversation_id: the default conversation of the contexts sent (a
            fresh ``conv_<random>`` when not given); check() may name another.
        log_executions: record each tool's outcome (default True).
        verify_tools: when given, only these tool names are verified; the
            others run unchecked (the default verifies every tool).
        wait_for_approval: seconds to wait, when the gate answers PENDING,
            for a principal to resolve the approval (polled every
            ``approval_poll`` seconds); granted, the tool runs as that
            approved action. 0 (the default) refuses PENDING at once.
    """

    def __init__(
        self,
        agent_id: str,
        agent_token: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        client: Any = None,
        require_attestation: bool = False,
        jwks: Any = None,
        conversation_id: Optional[str] = None,
        log_executions: bool = True,
        verify_tools: Optional[list[str]] = None,
        wait_for_approval: float = 0.0,
        approval_poll: float = 0.5,
    ) -> None:
        if not agent_id:
            raise ValueError("agent_id is required")
        self.agent_id = agent_id
        if client is None:
            from .client import QWEDClient

            token = agent_token or (None if api_key else os.environ.get(AGENT_TOKEN_ENV))
            client = QWEDClient(api_key, base_url=base_url, agent_token=token)
            agent_token = None  # the client holds it
        self.client = client
        self._agent_token = agent_token
        self.require_attestation = require_attestation
        self.log_executions = log_executions
        self.verify_tools = None if verify_tools is None else frozenset(verify_tools)
        self.wait_for_approval = wait_for_approval
        self.approval_poll = approval_poll
        self.conversation_id = conversation_id or "conv_" + secrets.token_hex(8)
        self._keys: Optional[KeySet] = None if jwks is None else jwks if isinstance(jwks, KeySet) else KeySet(jwks)
        self._conversations: dict[str, _Conversation] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ToolGuard(agent_id={self.agent_id!r}, conversation_id={self.conversation_id!r})"

    def covers(self, tool_name: str) -> bool:
        """Whether calls of tool_name are verified."""
        return self.verify_tools is None or tool_name in self.verify_tools

    def new_conversation(self, conversation_id: Optional[str] = None) -> str:
        """Makes a new conversation the default (its steps start at 1) and
        returns its id. The gate allows 50 steps in a conversation
        (QWED-AGENT-LOOP-001): start one per task."""
        self.conversation_id = conversation_id or "conv_" + secrets.token_hex(8)
        return self.conversation_id

    def end_conversation(self, conversation_id: str) -> None:
        """Forgets the step count of a conversation that is over."""
        with self._lock:
            self._conversations.pop(conversation_id, None)

    def _conversation(self, conversation_id: str) -> _Conversation:
        with self._lock:
            conv = self._conversations.get(conversation_id)
            if conv is None:
                while len(self._conversations) >= MAX_CONVERSATIONS:
                    del self._conversations[next(iter(self._conversations))]  # the oldest
                conv = self._conversations[conversation_id] = _Conversation()
            return conv

    def check(self, tool_name: str, parameters: Any, conversation_id: Optional[str] = None) -> Approval:
        """Asks the gate about one call of tool_name with parameters, as the
        next step of the conversation (the default one when None);
        returns the approval, or raises ToolCallDenied (not approved),
        AttestationError (an attestation was required and does not verify)
        or the client's QWEDError (no answer).

        The calls of one conversation are sent one at a time, so their step
        numbers reach the gate in increasing order even when tools run in
        parallel (a step arriving after a later one is a replay,
        QWED-AGENT-LOOP-002)."""
        cid = conversation_id or self.conversation_id
        kw: dict[str, Any] = {}
        if self.require_attestation:
            kw["options"] = {"require_attestation": True}
        if self._agent_token:
            kw["agent_token"] = self._agent_token
        params = _json_parameters(parameters)
        conv = self._conversation(cid)
        with conv.lock:
            conv.step += 1
            kw["context"] = {"conversation_id": cid, "step_number": conv.step}
            reply = self.client.verify_tool_call(self.agent_id, tool_name, params, **kw)
        decision = reply.get("decision")
        if decision == "PENDING" and self.wait_for_approval > 0:
            status = self._await_approval(reply)
            if status != "approved":
                raise ToolCallDenied(tool_name, reply, approval_status=status)
        elif decision != "APPROVED":
            raise ToolCallDenied(tool_name, reply)
        approval = Approval(tool_name=tool_name, action_id=reply["action_id"])
        token = reply.get("attestation")
        if self.require_attestation:
            if not token:
                raise AttestationError("the gate approved the call without an attestation")
            approval.attestation = token
            # The client's keys (fetched once, again if the gate rotated
            # its key), which log_execution verifies the token with too.
            approval.claims = self.client.verify_attestation(token, self._keys)
            # A call granted by a principal carries the attestation of its
            # PENDING decision; the grant itself was read from the gate.
            want_claims = {
                "jti": approval.action_id, "agent_id": self.agent_id, "decision": decision,
            }  # fmt: skip
            for claim, want in want_claims.items():
                if approval.claims.get(claim) != want:
                    raise AttestationError(f"the attestation's {claim} is {approval.claims.get(claim)!r}, not {want!r}")
        return approval

    def _await_approval(self, reply: Mapping[str, Any]) -> str:
        """Polls the approval of a PENDING reply until a principal resolves
        it or wait_for_approval passes; returns its status then."""
        approval = reply.get("approval") if isinstance(reply.get("approval"), Mapping) else {}
        approval_id = approval.get("approval_id")
        if not approval_id:
            return "pending"
        kw = {"agent_token": self._agent_token} if self._agent_token else {}
        deadline = time.monotonic() + self.wait_for_approval
        while True:
            status = str(self.client.get_approval(approval_id, **kw).get("status") or "pending")
            left = deadline - time.monotonic()
            if status != "pending" or left <= 0:
                return status
            time.sleep(min(self.approval_poll, left))

    def record(self, approval: Approval, success: bool) -> Optional[Any]:
        """Logs the outcome of an approved call (with its attestation);
        returns the gate's answer, None when not logged."""
        if not self.log_executions:
            return None
        kw: dict[str, Any] = {"attestation": approval.attestation}
        if self._agent_token:
            kw["agent_token"] = self._agent_token
        try:
            return self.client.log_execution(self.agent_id, approval.action_id, success, **kw)
        except (QWEDError, AttestationError, ValueError) as exc:
            log.warning(
                "logging the execution of tool %r (action %s): %s",
                approval.tool_name, approval.action_id, exc,
            )  # fmt: skip
            return None
