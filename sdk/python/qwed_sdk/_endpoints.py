"""Every endpoint of the gate, written once for both clients.

Each method builds a :class:`~qwed_sdk._http.Call` and returns
``self._send(call)``: the sync client's ``_send`` performs it and returns the
result, the async client's returns a coroutine, so ``await
client.verify_action(...)`` works with the same code.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _models as m
from ._http import Call, path
from .errors import AttestationMismatchError
from ._results import ActionDecision, ActivityPage, model_for

__all__ = ["Endpoints"]

JSON = Mapping[str, Any]


def _drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _is_decision(status: int, body: Any) -> bool:
    """A decision is a result at any status (DENIED 403, PENDING 202,
    BUDGET_EXCEEDED 429)."""
    return isinstance(body, dict) and "decision" in body


def _is_verdict(status: int, body: Any) -> bool:
    """An A2A verdict (forwarded or blocked) is a result at any status."""
    return isinstance(body, dict) and "status" in body and "error" not in body


def _is_qwed_answer(status: int, body: Any) -> bool:
    """A QWED protocol answer that is a verification outcome (VERIFIED,
    FAILED, CORRECTED, ...), not a §8.4 error (status ERROR)."""
    return isinstance(body, dict) and ("verified" in body or "batch" in body) and body.get("status") != "ERROR"


def _is_jsonrpc(status: int, body: Any) -> bool:
    """A JSON-RPC answer (a result or a JSON-RPC error) is a result at any status."""
    return isinstance(body, dict) and body.get("jsonrpc") == "2.0"


def _is_cloudevent(status: int, body: Any) -> bool:
    """A reply CloudEvent carries the endpoint's status (a DENIED decision is 403)."""
    return isinstance(body, dict) and "specversion" in body


class Endpoints:
    """The methods of QWEDClient and AsyncQWEDClient (one per endpoint).

    Writes take ``idempotency_key=`` (else a fresh one per call, reused on
    its retries). A query parameter named like a Python keyword takes a
    trailing underscore (``from_=``). Agent-scoped calls take
    ``agent_token=`` to act as that agent for one call (else the client's
    token, else its API key).
    """

    _keyset: Any = None
    """The gate's keys, fetched by the first verify_attestation without a JWKS."""

    def _send(self, call: Call) -> Any:  # pragma: no cover - provided by the clients
        raise NotImplementedError

    def _then(self, value: Any, fn: Callable[[Any], Any]) -> Any:
        """fn(value); the async client awaits value first and returns a coroutine."""
        return fn(value)

    def _get(self, route: str, p: str, query: Optional[JSON] = None, **kw: Any) -> Any:
        if query:  # from_= is the query parameter from (a keyword in Python)
            query = {(k[:-1] if k.endswith("_") else k): v for k, v in query.items()}
        kw.setdefault("decode", model_for(route))
        return self._send(Call("GET", p, query=query, route=route, **kw))

    def _write(self, route: str, p: str, body: Any = None, *, idempotency_key: Optional[str] = None, **kw: Any) -> Any:
        method = route.split(" ", 1)[0]
        kw.setdefault("decode", model_for(route))
        return self._send(Call(method, p, body=body, write=True, idempotency_key=idempotency_key, route=route, **kw))

    # ---- agents (QWED-Agent spec v1.1) -------------------------------------------------

    def register_agent(
        self,
        name: str,
        type: str = "supervised",
        principal_id: Optional[str] = None,
        permissions: Optional[JSON] = None,
        budget: Optional[JSON] = None,
        *,
        description: Optional[str] = None,
        framework: Optional[str] = None,
        model: Optional[str] = None,
        trust_level: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.RegistrationResponse:
        """Registers an agent (§3.1) with the client's API key; the answer
        (§3.2) holds ``agent_id`` and, once only, ``agent_token``.

        type is the agent's type: supervised (the default, the most
        restricted), autonomous or trusted."""
        agent = _drop_none(
            {
                "name": name,
                "type": type,
                "principal_id": principal_id,
                "description": description,
                "framework": framework,
                "model": model,
            }
        )
        body = _drop_none({"agent": agent, "permissions": permissions, "budget": budget, "trust_level": trust_level})
        return self._write(
            "POST /agents/register", "/agents/register", body, idempotency_key=idempotency_key, auth="key"
        )

    def get_agent(self, agent_id: str) -> m.Agent:
        """The agent's registration, status, trust level and counters."""
        return self._get("GET /agents/{id}", path("agents", agent_id))

    def get_agent_budget(self, agent_id: str) -> m.Budget:
        """The agent's budget and its use (§6.1): cost, requests, tokens, tools."""
        return self._get("GET /agents/{id}/budget", path("agents", agent_id, "budget"))

    def get_agent_activity(
        self,
        agent_id: str,
        limit: Optional[int] = None,
        *,
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after_seq: Optional[int] = None,
    ) -> ActivityPage:
        """A page of the agent's activity log (§7.2) over [from_, to)
        (RFC 3339 times or YYYY-MM-DD dates; by default the last 30 days):
        iterable over its entries; pass ``after_seq=page.next_after_seq``
        for the next page."""
        q = {"limit": limit, "from": from_, "to": to, "after_seq": after_seq}
        return self._get("GET /agents/{id}/activity", path("agents", agent_id, "activity"), q, decode=ActivityPage)

    def get_agent_state(
        self, agent_id: str, *, at_seq: Optional[int] = None, at_time: Optional[str] = None
    ) -> m.AgentState:
        """The agent's state as of a log position (at_seq) or a time
        (at_time, RFC 3339): exactly one of them."""
        q = {"at_seq": at_seq, "at_time": at_time}
        return self._get("GET /agents/{id}/state", path("agents", agent_id, "state"), q)

    def export_compliance_report(
        self, agent_id: str, format: str = "json", *, from_: Optional[str] = None, to: Optional[str] = None
    ) -> Union[m.ComplianceBundle, bytes]:
        """The agent's compliance report (§7.3): for "json" the signed
        bundle as a dict; for "csv" and "pdf" the bytes as sent."""
        q = {"format": format, "from": from_, "to": to}
        p = path("agents", agent_id, "compliance-report")
        if format == "json":
            return self._get("GET /agents/{id}/compliance-report", p, q)
        return self._get("GET /agents/{id}/compliance-report", p, q, raw=True, decode=None)

    def verify_action(
        self,
        agent_id: str,
        action: JSON,
        context: Optional[JSON] = None,
        *,
        options: Optional[JSON] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> ActionDecision:
        """Verifies an action before it runs (§4.1). context needs
        conversation_id and an increasing step_number (the QWED-Agent user
        guide's "Conversation controls"). Every decision is returned, not
        raised: check ``result["decision"]``."""
        body = _drop_none({"action": dict(action), "context": context, "options": options})
        act = dict(action)

        def decode(b: Any) -> Any:
            if not isinstance(b, dict):
                return b
            out = ActionDecision(b)
            out._action = act
            return out

        return self._write(
            "POST /agents/{id}/verify",
            path("agents", agent_id, "verify"),
            body,
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            accept=_is_decision,
            decode=decode,
        )

    def verify_tool_call(
        self,
        agent_id: str,
        tool_name: str,
        parameters: Optional[JSON] = None,
        *,
        context: Optional[JSON] = None,
        justification: Optional[str] = None,
        options: Optional[JSON] = None,
        estimated_cost_usd: Optional[float] = None,
        estimated_tokens: Optional[int] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> ActionDecision:
        """Verifies a tool call before the tool runs (§5.1); the decision is
        returned whatever it is (PENDING carries ``approval``)."""
        tool_call = _drop_none(
            {
                "tool_name": tool_name,
                "parameters": parameters,
                "estimated_cost_usd": estimated_cost_usd,
                "estimated_tokens": estimated_tokens,
            }
        )
        body = _drop_none(
            {"tool_call": tool_call, "context": context, "justification": justification, "options": options}
        )
        return self._write(
            "POST /agents/{id}/tools/{tool}",
            path("agents", agent_id, "tools", tool_name),
            body,
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            accept=_is_decision,
            decode=ActionDecision,
        )

    def log_execution(
        self,
        agent_id: str,
        action_id: Optional[str] = None,
        success: Optional[bool] = None,
        *,
        attestation: Optional[str] = None,
        cost_usd: Optional[float] = None,
        tokens: Optional[int] = None,
        result_hash: Optional[str] = None,
        output: Optional[str] = None,
        sandboxed: Optional[bool] = None,
        sandbox: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.ExecutionReply:
        """Records the outcome of an approved action (§7.1's execution).

        output, the text the action produced (at most 64 KiB), is scanned by
        the gate for PII and hashed, never recorded: the reply's
        ``result_hash`` is its SHA-256 when result_hash is not given (a
        different one is refused), and a card number, IBAN, SSN, credential
        or private key in it flags the execution (``pii_violation``).
        sandboxed attests that the action ran in a sandbox (required when its
        decision said ``sandbox_required``, else the execution is flagged
        ``sandbox_violation``); sandbox optionally describes it.

        attestation, the decision's attestation, is verified before anything
        is sent: offline against the gate's keys (verify_attestation), then
        its ``jti`` must be action_id (which it supplies when omitted) and
        its ``agent_id`` the agent. A token that does not verify raises its
        AttestationError; one of another action or agent raises
        AttestationMismatchError. The gate links the execution to the
        attestation it issued for that action, so the token is not sent."""

        def send(claims: Optional[Mapping[str, Any]]) -> Any:
            act = action_id
            if claims is not None:
                if act is None:
                    act = claims.get("jti")
                if claims.get("jti") != act:
                    raise AttestationMismatchError(f"it is of action {claims.get('jti')!r}, not {act!r}")
                if claims.get("agent_id") not in (None, agent_id):
                    raise AttestationMismatchError(f"it is of agent {claims.get('agent_id')!r}, not {agent_id!r}")
            body = _drop_none(
                {
                    "action_id": act,
                    "success": success,
                    "cost_usd": cost_usd,
                    "tokens": tokens,
                    "result_hash": result_hash,
                    "output": output,
                    "sandboxed": sandboxed,
                    "sandbox": sandbox,
                }
            )
            return self._write(
                "POST /agents/{id}/executions",
                path("agents", agent_id, "executions"),
                body,
                idempotency_key=idempotency_key,
                agent_token=agent_token,
            )

        if attestation is None:
            return send(None)
        return self._then(self.verify_attestation(attestation), send)

    def request_trust(
        self,
        agent_id: str,
        to_level: int,
        *,
        from_level: Optional[int] = None,
        justification: Optional[str] = None,
        evidence: Optional[JSON] = None,
        request: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.TrustRequestReply:
        """Asks for a trust elevation (§8.2) from from_level, the agent's
        current level (the gate refuses another with QWED-REQ-409), to
        to_level: granted, refused or pending a human."""
        body = _drop_none(
            {
                "to_level": to_level,
                "from_level": from_level,
                "justification": justification,
                "evidence": evidence,
                "request": request,
            }
        )
        return self._write(
            "POST /agents/{id}/trust",
            path("agents", agent_id, "trust"),
            body,
            idempotency_key=idempotency_key,
            agent_token=agent_token,
        )

    def set_trust_level(
        self, agent_id: str, trust_level: int, *, reason: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.TrustChangedReply:
        """Sets the agent's trust level (0-3; principal or admin key)."""
        body = _drop_none({"trust_level": trust_level, "reason": reason})
        return self._write(
            "POST /agents/{id}/trust-level",
            path("agents", agent_id, "trust-level"),
            body,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def suspend_agent(
        self,
        agent_id: str,
        *,
        reason: Optional[str] = None,
        suspended: bool = True,
        idempotency_key: Optional[str] = None,
    ) -> m.StatusReply:
        """Suspends the agent (suspended=False reinstates it)."""
        body = _drop_none({"suspended": suspended, "reason": reason})
        return self._write(
            "POST /agents/{id}/suspend",
            path("agents", agent_id, "suspend"),
            body,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def resume_agent(
        self, agent_id: str, *, reason: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.StatusReply:
        """Reinstates a suspended agent."""
        return self.suspend_agent(agent_id, reason=reason, suspended=False, idempotency_key=idempotency_key)

    def file_complaint(
        self, agent_id: str, reason: Optional[str] = None, *, idempotency_key: Optional[str] = None
    ) -> m.StatusReply:
        """Files a complaint against the agent (trust degradation, §8.3)."""
        return self._write(
            "POST /agents/{id}/complaints",
            path("agents", agent_id, "complaints"),
            _drop_none({"reason": reason}),
            idempotency_key=idempotency_key,
            auth="key",
        )

    def rotate_token(
        self, agent_id: str, *, agent_token: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.TokenResponse:
        """Issues the agent a new token (``agent_token``, shown once) and revokes the old one."""
        return self._write(
            "POST /agents/{id}/token/rotate",
            path("agents", agent_id, "token", "rotate"),
            None,
            idempotency_key=idempotency_key,
            agent_token=agent_token,
        )

    def revoke_token(self, agent_id: str, *, idempotency_key: Optional[str] = None) -> m.TokenResponse:
        """Revokes the agent's token (principal or admin key): the agent can
        no longer authenticate until its token is rotated."""
        return self._write(
            "DELETE /agents/{id}/token",
            path("agents", agent_id, "token"),
            None,
            idempotency_key=idempotency_key,
            auth="key",
        )

    # ---- principals ----------------------------------------------------------------------

    def put_tools(
        self, principal_id: str, tools: Sequence[JSON], *, idempotency_key: Optional[str] = None
    ) -> m.PutToolRegistry:
        """Replaces the principal's tool registry (§5.3)."""
        return self._write(
            "PUT /principals/{id}/tools",
            path("principals", principal_id, "tools"),
            {"tools": [dict(t) for t in tools]},
            idempotency_key=idempotency_key,
            auth="key",
        )

    def put_principal_permissions(
        self,
        principal_id: str,
        *,
        allowed_paths: Optional[Sequence[str]] = None,
        denied_paths: Optional[Sequence[str]] = None,
        allowed_hosts: Optional[Sequence[str]] = None,
        allowed_schemes: Optional[Sequence[str]] = None,
        allowed_ports: Optional[Sequence[int]] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.PrincipalPermissions:
        """Sets the principal's default path and egress policy for all its agents (§2.2): an
        agent's own lists only narrow it. Lists left out are cleared; hosts come back as A-labels."""
        body: dict[str, Any] = {}
        for k, v in (
            ("allowed_paths", allowed_paths),
            ("denied_paths", denied_paths),
            ("allowed_hosts", allowed_hosts),
            ("allowed_schemes", allowed_schemes),
            ("allowed_ports", allowed_ports),
        ):
            if v is not None:
                body[k] = list(v)
        return self._write(
            "PUT /principals/{id}/permissions",
            path("principals", principal_id, "permissions"),
            body,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def issue_principal_key(self, principal_id: str, *, idempotency_key: Optional[str] = None) -> m.KeyIssuedResponse:
        """Issues an API key for the principal (admin key): ``api_key`` is shown once."""
        return self._write(
            "POST /principals/{id}/keys",
            path("principals", principal_id, "keys"),
            None,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def rotate_principal_key(
        self, principal_id: str, key_id: str, *, idempotency_key: Optional[str] = None
    ) -> m.KeyIssuedResponse:
        """Issues a key replacing key_id (which is revoked)."""
        return self._write(
            "POST /principals/{id}/keys/{key_id}/rotate",
            path("principals", principal_id, "keys", key_id, "rotate"),
            None,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def revoke_principal_key(
        self, principal_id: str, key_id: str, *, idempotency_key: Optional[str] = None
    ) -> m.KeyReply:
        """Revokes the principal's key key_id."""
        return self._write(
            "DELETE /principals/{id}/keys/{key_id}",
            path("principals", principal_id, "keys", key_id),
            None,
            idempotency_key=idempotency_key,
            auth="key",
        )

    # ---- approvals -----------------------------------------------------------------------

    def list_approvals(
        self, status: Optional[str] = None, *, limit: Optional[int] = None, after: Optional[str] = None
    ) -> m.ApprovalList:
        """The principal's approvals (status: pending, approved, denied, expired)."""
        return self._get("GET /approvals", "/approvals", {"status": status, "limit": limit, "after": after}, auth="key")

    def get_approval(self, approval_id: str, *, agent_token: Optional[str] = None) -> m.Approval:
        """One approval (its principal's key, or the token of the agent it concerns)."""
        return self._get("GET /approvals/{id}", path("approvals", approval_id), agent_token=agent_token)

    def approve(
        self, approval_id: str, reason: Optional[str] = None, *, idempotency_key: Optional[str] = None
    ) -> m.ApprovalReply:
        """Approves a pending action or execute (the principal's key)."""
        return self._write(
            "POST /approvals/{id}/approve",
            path("approvals", approval_id, "approve"),
            _drop_none({"reason": reason}),
            idempotency_key=idempotency_key,
            auth="key",
        )

    def deny(
        self, approval_id: str, reason: Optional[str] = None, *, idempotency_key: Optional[str] = None
    ) -> m.ApprovalReply:
        """Denies a pending action or execute (the principal's key)."""
        return self._write(
            "POST /approvals/{id}/deny",
            path("approvals", approval_id, "deny"),
            _drop_none({"reason": reason}),
            idempotency_key=idempotency_key,
            auth="key",
        )

    # ---- QWED protocol v1.0: /verify, /engines ----------------------------------------------

    def verify(
        self,
        query: str,
        type: Optional[str] = None,
        *,
        params: Optional[JSON] = None,
        options: Optional[JSON] = None,
        metadata: Optional[JSON] = None,
        protocol_version: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.VerifyResponse:
        """Verifies one claim with an engine (QWED protocol v1.0 §5.1):
        type is math, logic, stats, fact, code, sql, image, reasoning or
        natural_language. VERIFIED, FAILED, CORRECTED, ... are results."""
        body = _drop_none({"type": type, "query": query, "params": params, "options": options, "metadata": metadata})
        headers = {"QWED-Protocol-Version": protocol_version} if protocol_version else {}
        return self._write(
            "POST /verify",
            "/verify",
            body,
            idempotency_key=idempotency_key,
            auth="key",
            headers=headers,
            accept=_is_qwed_answer,
        )

    def verify_batch(
        self,
        items: Iterable[JSON],
        *,
        options: Optional[JSON] = None,
        metadata: Optional[JSON] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.BatchVerifyResponse:
        """Verifies up to 100 claims in one request (QWED protocol v1.0 §5.3)."""
        body = _drop_none({"batch": True, "items": [dict(i) for i in items], "options": options, "metadata": metadata})
        return self._write(
            "POST /verify",
            "/verify",
            body,
            idempotency_key=idempotency_key,
            auth="key",
            accept=_is_qwed_answer,
        )

    def list_engines(self) -> m.Engines:
        """The engines and their capabilities (QWED protocol v1.0 §4.2)."""
        return self._get("GET /engines", "/engines", auth="key")

    # ---- A2A (QWED A2A) -------------------------------------------------------------------

    def a2a_intercept(
        self,
        message: Optional[JSON] = None,
        *,
        sender_agent_id: Optional[str] = None,
        receiver_agent_id: Optional[str] = None,
        payload: Any = None,
        payload_type: Optional[str] = None,
        trace_id: Optional[str] = None,
        timestamp: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.A2AReply:
        """Verifies a message one agent sends another: the verdict
        (forwarded or blocked, with ``attestation_jwt``) is a result. Pass
        the message as a dict or as keywords."""
        body = dict(message or {})
        body.update(
            _drop_none(
                {
                    "sender_agent_id": sender_agent_id,
                    "receiver_agent_id": receiver_agent_id,
                    "payload": payload,
                    "payload_type": payload_type,
                    "trace_id": trace_id,
                    "timestamp": timestamp,
                }
            )
        )
        return self._write(
            "POST /a2a/intercept",
            "/a2a/intercept",
            body,
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            accept=_is_verdict,
        )

    def _boundary(self, method: str, kind: str, agent: str, idempotency_key: Optional[str]) -> m.A2ABoundaryReply:
        route = f"{method} /a2a/boundary/{kind}/{{agent}}"
        return self._write(
            route, path("a2a", "boundary", kind, agent), None, idempotency_key=idempotency_key, auth="key"
        )

    def a2a_trust(self, agent: str, *, idempotency_key: Optional[str] = None) -> m.A2ABoundaryReply:
        """Adds agent to the trust boundary's allowlist."""
        return self._boundary("POST", "trust", agent, idempotency_key)

    def a2a_untrust(self, agent: str, *, idempotency_key: Optional[str] = None) -> m.A2ABoundaryReply:
        """Removes agent from the allowlist."""
        return self._boundary("DELETE", "trust", agent, idempotency_key)

    def a2a_block(self, agent: str, *, idempotency_key: Optional[str] = None) -> m.A2ABoundaryReply:
        """Blocks every message from or to agent."""
        return self._boundary("POST", "block", agent, idempotency_key)

    def a2a_unblock(self, agent: str, *, idempotency_key: Optional[str] = None) -> m.A2ABoundaryReply:
        """Lifts the block of agent."""
        return self._boundary("DELETE", "block", agent, idempotency_key)

    def a2a_block_pair(
        self, sender: str, receiver: str, *, idempotency_key: Optional[str] = None
    ) -> m.A2ABoundaryReply:
        """Blocks the messages of sender to receiver."""
        return self._write(
            "POST /a2a/boundary/block-pair",
            "/a2a/boundary/block-pair",
            {"sender": sender, "receiver": receiver},
            idempotency_key=idempotency_key,
            auth="key",
        )

    def a2a_unblock_pair(
        self, sender: str, receiver: str, *, idempotency_key: Optional[str] = None
    ) -> m.A2ABoundaryReply:
        """Lifts the block of the pair sender -> receiver."""
        return self._write(
            "DELETE /a2a/boundary/block-pair",
            "/a2a/boundary/block-pair",
            {"sender": sender, "receiver": receiver},
            idempotency_key=idempotency_key,
            auth="key",
        )

    def get_a2a_boundary(self, **query: Any) -> m.A2ABoundary:
        """The trust boundary (query: principal, list, after, limit, at_seq, at_time)."""
        return self._get("GET /a2a/boundary", "/a2a/boundary", query, auth="key")

    def get_a2a_metrics(self, **query: Any) -> m.A2AMetrics:
        """A2A counters: forwarded, blocked, rate limited, errors, per engine and per pair."""
        return self._get("GET /a2a/metrics", "/a2a/metrics", query, auth="key")

    def a2a_health(self) -> m.A2AHealth:
        """The A2A gateway's health (public)."""
        return self._get("GET /a2a/health", "/a2a/health", auth="none")

    def get_a2a_agent_card(self, name: str, *, legacy: bool = False) -> dict[str, Any]:
        """The Agent Card of the A2A agent the gate fronts as name (serve
        --a2a-upstream), rewritten so that its JSON-RPC interface is the
        gate; legacy reads it at the A2A 0.3 path (agent.json). Public."""
        if legacy:
            route = "GET /a2a/proxy/{name}/.well-known/agent.json"
            p = path("a2a", "proxy", name, ".well-known", "agent.json")
        else:
            route = "GET /a2a/proxy/{name}/.well-known/agent-card.json"
            p = path("a2a", "proxy", name, ".well-known", "agent-card.json")
        return self._get(route, p, auth="none")

    def a2a_proxy(
        self,
        name: str,
        request: JSON,
        *,
        a2a_version: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.JSONRPCResponse:
        """Sends an A2A JSON-RPC request (SendMessage; message/send of A2A
        0.3) to the agent the gate fronts as name: each part is intercepted
        as a2a_intercept decides it. The JSON-RPC answer is the result,
        the agent's or the gate's error (-32050 with the verdict as data,
        -32051, -32052, -32004)."""
        headers = {"A2A-Version": a2a_version} if a2a_version else {}
        return self._write(
            "POST /a2a/proxy/{name}",
            path("a2a", "proxy", name),
            dict(request),
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            headers=headers,
            accept=_is_jsonrpc,
        )

    # ---- Agent Policy Engine: execute, businesses, policies, transactions, webhooks -----------

    def _execute_headers(self, agent_id: Optional[str], confirmation_token: Optional[str]) -> dict[str, str]:
        h = {}
        if agent_id:
            h["X-Agent-ID"] = agent_id
        if confirmation_token:
            h["X-Confirmation-Token"] = confirmation_token
        return h

    def prepare_execute(
        self,
        business_id: str,
        request: JSON,
        *,
        agent_id: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.PrepareResponse:
        """Prepares an execute: a single-use ``confirmationToken`` for this exact request."""
        return self._write(
            "POST /agp/execute/prepare",
            "/agp/execute/prepare",
            {"businessId": business_id, "request": dict(request)},
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            headers=self._execute_headers(agent_id, None),
        )

    def execute(
        self,
        business_id: str,
        request: JSON,
        *,
        confirmation_token: Optional[str] = None,
        agent_id: Optional[str] = None,
        agent_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.ExecuteReply:
        """Executes a request at a business under the consumer's policies:
        completed, failed, or pending_approval (202, ``approvalId``)."""
        return self._write(
            "POST /agp/execute",
            "/agp/execute",
            {"businessId": business_id, "request": dict(request)},
            idempotency_key=idempotency_key,
            agent_token=agent_token,
            headers=self._execute_headers(agent_id, confirmation_token),
        )

    def create_business(
        self,
        id: str,
        name: str,
        endpoint: str,
        *,
        categories: Optional[Sequence[str]] = None,
        currency: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.Business:
        """Registers a business: where the gate POSTs a decided execute."""
        body = _drop_none(
            {"id": id, "name": name, "endpoint": endpoint, "categories": categories, "currency": currency}
        )
        return self._write("POST /businesses", "/businesses", body, idempotency_key=idempotency_key, auth="key")

    def list_businesses(self, *, limit: Optional[int] = None, after: Optional[str] = None) -> m.BusinessList:
        """The businesses, a page at a time."""
        return self._get("GET /businesses", "/businesses", {"limit": limit, "after": after}, auth="key")

    def get_business(self, business_id: str) -> m.BusinessInfo:
        """One business."""
        return self._get("GET /businesses/{id}", path("businesses", business_id), auth="key")

    def update_business(self, business_id: str, business: JSON, *, idempotency_key: Optional[str] = None) -> m.Business:
        """Replaces the business's fields (name, endpoint, categories, currency)."""
        return self._write(
            "PUT /businesses/{id}",
            path("businesses", business_id),
            dict(business),
            idempotency_key=idempotency_key,
            auth="key",
        )

    def delete_business(self, business_id: str, *, idempotency_key: Optional[str] = None) -> m.BusinessDeletedReply:
        """Deletes the business."""
        return self._write(
            "DELETE /businesses/{id}",
            path("businesses", business_id),
            None,
            idempotency_key=idempotency_key,
            auth="key",
        )

    def create_policy(
        self, policy: JSON, *, consumer: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.PolicyReply:
        """Creates a consumer policy ({"id", "type": spending|time_window|confirmation|..., ...})."""
        return self._write(
            "POST /policies",
            "/policies",
            dict(policy),
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def list_policies(self, *, consumer: Optional[str] = None) -> m.PolicyList:
        """The consumer's policies (the admin names the consumer)."""
        return self._get("GET /policies", "/policies", {"consumer": consumer}, auth="key")

    def get_policy(
        self, policy_id: str, *, consumer: Optional[str] = None, at_seq: Optional[int] = None
    ) -> Union[m.PolicyView, m.PolicyAt]:
        """One policy (as of log position at_seq when given)."""
        return self._get(
            "GET /policies/{id}", path("policies", policy_id), {"consumer": consumer, "at_seq": at_seq}, auth="key"
        )

    def update_policy(
        self, policy_id: str, policy: JSON, *, consumer: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.PolicyReply:
        """Replaces the policy (a new version)."""
        return self._write(
            "PUT /policies/{id}",
            path("policies", policy_id),
            dict(policy),
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def delete_policy(
        self, policy_id: str, *, consumer: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.PolicyReply:
        """Deletes the policy."""
        return self._write(
            "DELETE /policies/{id}",
            path("policies", policy_id),
            None,
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def list_transactions(self, **filters: Any) -> m.TransactionList:
        """Transactions (filters: consumer, agent, business, category,
        status, from_, to, limit, after)."""
        return self._get("GET /transactions", "/transactions", filters)

    def get_transaction(
        self, transaction_id: str, *, at_seq: Optional[int] = None, at_time: Optional[str] = None
    ) -> Union[m.TransactionRecord, m.TransactionAt]:
        """One transaction (as of at_seq or at_time when given)."""
        q = {"at_seq": at_seq, "at_time": at_time}
        return self._get("GET /transactions/{id}", path("transactions", transaction_id), q)

    def get_transaction_summary(self, **filters: Any) -> m.TransactionSummary:
        """Totals of the transactions (filters as list_transactions, plus period)."""
        return self._get("GET /transactions/summary", "/transactions/summary", filters)

    def get_transaction_analytics(self, **filters: Any) -> m.TransactionAnalytics:
        """Spending analytics (filters as list_transactions, plus currency, time_zone)."""
        return self._get("GET /transactions/analytics", "/transactions/analytics", filters)

    def create_webhook(
        self,
        url: str,
        events: Optional[Sequence[str]] = None,
        *,
        consumer: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.WebhookResponse:
        """Subscribes url to the consumer's transaction events."""
        return self._write(
            "POST /webhooks",
            "/webhooks",
            _drop_none({"url": url, "events": events}),
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def list_webhooks(self, *, consumer: Optional[str] = None) -> m.WebhookList:
        """The consumer's webhooks."""
        return self._get("GET /webhooks", "/webhooks", {"consumer": consumer}, auth="key")

    def get_webhook(self, webhook_id: str, *, consumer: Optional[str] = None) -> m.Webhook:
        """One webhook."""
        return self._get("GET /webhooks/{id}", path("webhooks", webhook_id), {"consumer": consumer}, auth="key")

    def update_webhook(
        self,
        webhook_id: str,
        url: Optional[str] = None,
        events: Optional[Sequence[str]] = None,
        *,
        consumer: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> m.WebhookResponse:
        """Changes the webhook's url and events."""
        return self._write(
            "PUT /webhooks/{id}",
            path("webhooks", webhook_id),
            _drop_none({"url": url, "events": events}),
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def delete_webhook(
        self, webhook_id: str, *, consumer: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> m.WebhookResponse:
        """Deletes the webhook."""
        return self._write(
            "DELETE /webhooks/{id}",
            path("webhooks", webhook_id),
            None,
            idempotency_key=idempotency_key,
            auth="key",
            query={"consumer": consumer},
        )

    def list_webhook_deliveries(self, webhook_id: Optional[str] = None, **filters: Any) -> m.DeliveryList:
        """Deliveries (of one webhook, or all; filters: status, kind, consumer, limit, after)."""
        if webhook_id is not None:
            return self._get(
                "GET /webhooks/{id}/deliveries", path("webhooks", webhook_id, "deliveries"), filters, auth="key"
            )
        return self._get("GET /webhooks/deliveries", "/webhooks/deliveries", filters, auth="key")

    # ---- operations ---------------------------------------------------------------------------

    def send_event(self, event: JSON) -> m.CloudEvent:
        """Sends a command as a structured CloudEvent (POST /events; its
        source and id are the request id, its subject the agent, its data
        the endpoint's body): the answer is the reply CloudEvent (type
        <type>.reply, data the endpoint's body), whatever its status."""
        call = Call(
            "POST",
            "/events",
            body=dict(event),
            headers={"Content-Type": "application/cloudevents+json"},
            route="POST /events",
            accept=_is_cloudevent,
            decode=model_for("POST /events"),
        )
        return self._send(call)

    def verify_attestation(self, token: str, jwks: Any = None, *, now: Optional[float] = None) -> dict[str, Any]:
        """Verifies an attestation offline (ES256, qwed_sdk.attestation) and
        returns its claims; raises an AttestationError subclass when it does
        not verify. jwks is a JWKS document or KeySet; without one, the
        gate's (jwks()) is fetched once and kept by the client."""
        return self._then(None, lambda _: self._verify_offline(token, jwks, now))

    def _verify_offline(self, token: str, jwks: Any, now: Optional[float]) -> Any:
        """The claims of token (the async client: a coroutine of them). The
        gate's keys are fetched on first use and again, once, when the token
        names a key they lack (the gate rotated its keys)."""
        from .attestation import KeySet, UnknownKeyError

        if jwks is not None:
            return (jwks if isinstance(jwks, KeySet) else KeySet(jwks)).verify(token, now=now)

        def fetched(doc: Any) -> Any:
            self._keyset = KeySet(doc)
            return self._keyset.verify(token, now=now)

        if self._keyset is not None:
            try:
                return self._keyset.verify(token, now=now)
            except UnknownKeyError:
                pass
        return self._then(self.jwks(), fetched)

    def jwks(self) -> m.JWKS:
        """The gate's public signing keys (GET /.well-known/jwks.json), for
        verifying attestations offline."""
        return self._get("GET /.well-known/jwks.json", "/.well-known/jwks.json", auth="none")

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document of the gate's HTTP API (GET /openapi.json)."""
        return self._get("GET /openapi.json", "/openapi.json", auth="none", decode=None)

    def healthz(self) -> m.Health:
        """The gate's liveness: {"status": "ok", "seq": ...}."""
        return self._get("GET /healthz", "/healthz", auth="none")

    def metrics(self) -> str:
        """The Prometheus metrics, as text."""
        return self._get("GET /metrics", "/metrics", auth="none", decode=None)
