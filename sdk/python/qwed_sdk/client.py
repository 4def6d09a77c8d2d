"""The clients: QWEDClient (sync), AsyncQWEDClient (asyncio), and the
agent-bound QWEDAgentClient / AsyncQWEDAgentClient of the QWED-Agent spec
v1.1 §9.1 ("SDK Integration")."""

from __future__ import annotations

import inspect
import os
import secrets
import ssl
import threading
from typing import Any, Awaitable, Callable, Mapping, Optional, TypeVar

from ._endpoints import JSON, Endpoints
from ._http import AsyncTransport, Call, Core, SyncTransport
from ._results import ActionDecision, ActivityPage

__all__ = ["QWEDClient", "AsyncQWEDClient", "QWEDAgentClient", "AsyncQWEDAgentClient"]

T = TypeVar("T")

API_KEY_ENV = "AGENTGATE_API_KEY"
"""The environment variable read when no api_key is given."""


def _core(
    api_key: Optional[str],
    base_url: Optional[str],
    agent_token: Optional[str],
    timeout: float,
    max_retries: int,
    ssl_context: Optional[ssl.SSLContext],
    pool_size: int,
    user_agent: Optional[str],
) -> Core:
    if api_key is None and agent_token is None:
        api_key = os.environ.get(API_KEY_ENV) or None
    return Core(
        base_url=base_url, api_key=api_key, agent_token=agent_token, timeout=timeout, max_retries=max_retries,
        ssl_context=ssl_context, pool_size=pool_size, user_agent=user_agent,
    )


async def _chain(value: Any, fn: Callable[[Any], T]) -> T:
    """fn of value, awaited first when it is awaitable."""
    if inspect.isawaitable(value):
        value = await value
    return fn(value)


class _Base(Endpoints):
    _core: Core
    _transport_class: Any

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        agent_token: Optional[str] = None,
        timeout: float = 10.0,
        max_retries: int = 2,
        ssl_context: Optional[ssl.SSLContext] = None,
        pool_size: int = 10,
        user_agent: Optional[str] = None,
    ) -> None:
        self._core = _core(api_key, base_url, agent_token, timeout, max_retries, ssl_context, pool_size, user_agent)
        self._transport = self._transport_class(self._core)

    @property
    def base_url(self) -> str:
        """The gate's address this client calls."""
        return self._core.base_url

    def __repr__(self) -> str:
        creds = []
        if self._core.api_key is not None:
            creds.append("api_key='***'")
        if self._core.agent_token is not None:
            creds.append("agent_token='***'")
        return f"{type(self).__name__}(base_url={self._core.base_url!r}{''.join(', ' + c for c in creds)})"


class QWEDClient(_Base):
    """A synchronous client of the gate's HTTP API (thread-safe).

    Args:
        api_key: a principal's or the admin's API key (sent as X-API-Key);
            else the AGENTGATE_API_KEY environment variable (unless
            agent_token is given).
        base_url: the gate's address; else the AGENTGATE_URL environment
            variable; else http://127.0.0.1:8080. https URLs use TLS
            (ssl_context, else the system's trust store).
        agent_token: an agent's token (sent as Authorization: Bearer) for the
            agent-scoped calls.
        timeout: seconds each socket operation may wait.
        max_retries: retries of a call on a connection error or an answer
            408, 429 (not a decision), 502, 503, 504, after a capped
            exponential backoff with jitter, or the Retry-After the gate
            sent. A write is retried with the same Idempotency-Key.
        pool_size: keep-alive connections kept open.

    Every method of the gate's API is a method here (see Endpoints); the
    client is a context manager that closes its connections.
    """

    _transport_class = SyncTransport

    def _send(self, call: Call) -> Any:
        return self._transport.send(call)

    def close(self) -> None:
        """Closes the pooled connections."""
        self._transport.close()

    def __enter__(self) -> "QWEDClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncQWEDClient(_Base):
    """The asyncio client: the same arguments and methods as QWEDClient,
    every method awaitable (``await client.verify_action(...)``). Use it
    from one event loop; ``async with`` closes its connections. timeout
    bounds each attempt of a call as a whole."""

    _transport_class = AsyncTransport

    def _send(self, call: Call) -> Awaitable[Any]:  # type: ignore[override]
        return self._transport.send(call)

    def _then(self, value: Any, fn: Callable[[Any], T]) -> Awaitable[T]:
        return _chain(value, fn)

    async def close(self) -> None:
        """Closes the pooled connections."""
        await self._transport.close()

    async def __aenter__(self) -> "AsyncQWEDClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class _AgentBase:
    """The calls of one agent, authenticated by its token."""

    client: Any
    agent_id: str
    _client_class: Any

    def __init__(
        self,
        agent_id: str,
        agent_token: str,
        *,
        conversation_id: Optional[str] = None,
        registration: Optional[Mapping[str, Any]] = None,
        **client_kwargs: Any,
    ) -> None:
        """agent_id and agent_token name the agent; client_kwargs are the
        client's (base_url, timeout, max_retries, ...)."""
        if not agent_id or not agent_token:
            raise ValueError("agent_id and agent_token are required")
        self.client = self._client_class(agent_token=agent_token, **client_kwargs)
        self.agent_id = agent_id
        self.registration = registration
        self.conversation_id = conversation_id or "conv_" + secrets.token_hex(8)
        self._step = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(agent_id={self.agent_id!r}, base_url={self.client.base_url!r}, agent_token='***')"

    def _then(self, value: Any, fn: Callable[[Any], T]) -> Any:
        return fn(value)

    def new_conversation(self, conversation_id: Optional[str] = None) -> str:
        """Starts a new conversation for the generated contexts (step 1 next); returns its id."""
        with self._lock:
            self.conversation_id = conversation_id or "conv_" + secrets.token_hex(8)
            self._step = 0
        return self.conversation_id

    def next_context(self, user_intent: Optional[str] = None) -> dict[str, Any]:
        """The context of the next action: this client's conversation and
        its next step number (one more than the last one generated)."""
        with self._lock:
            self._step += 1
            ctx: dict[str, Any] = {"conversation_id": self.conversation_id, "step_number": self._step}
        if user_intent is not None:
            ctx["user_intent"] = user_intent
        return ctx

    def verify_action(
        self,
        action: JSON,
        context: Optional[JSON] = None,
        *,
        options: Optional[JSON] = None,
        idempotency_key: Optional[str] = None,
    ) -> ActionDecision:
        """Verifies an action of this agent (§4.1). Without context, the
        next step of this client's conversation is used (next_context)."""
        return self.client.verify_action(
            self.agent_id, action, context if context is not None else self.next_context(),
            options=options, idempotency_key=idempotency_key,
        )

    def verify_tool_call(self, tool_name: str, parameters: Optional[JSON] = None, **kw: Any) -> ActionDecision:
        """Verifies a tool call of this agent (§5.1); keywords as QWEDClient.verify_tool_call."""
        return self.client.verify_tool_call(self.agent_id, tool_name, parameters, **kw)

    def log_execution(
        self, action_id: Optional[str] = None, success: Optional[bool] = None, *, attestation: Optional[str] = None, **kw: Any
    ) -> Any:
        """Records the outcome of an approved action (see QWEDClient.log_execution)."""
        return self.client.log_execution(self.agent_id, action_id, success, attestation=attestation, **kw)

    def get_agent(self) -> Any:
        """This agent's registration and status."""
        return self.client.get_agent(self.agent_id)

    def get_budget(self) -> Any:
        """This agent's budget and its use (§6.1)."""
        return self.client.get_agent_budget(self.agent_id)

    def get_activity(self, limit: Optional[int] = None, **kw: Any) -> ActivityPage:
        """A page of this agent's activity log (§7.2)."""
        return self.client.get_agent_activity(self.agent_id, limit, **kw)

    def get_state(self, **kw: Any) -> Any:
        """This agent's state at a log position or time (at_seq= or at_time=)."""
        return self.client.get_agent_state(self.agent_id, **kw)

    def request_trust(self, to_level: int, **kw: Any) -> Any:
        """Asks for a trust elevation (§8.2)."""
        return self.client.request_trust(self.agent_id, to_level, **kw)

    def get_approval(self, approval_id: str) -> Any:
        """An approval of this agent's (its status once a human decided)."""
        return self.client.get_approval(approval_id)

    def verify_attestation(self, token: str, jwks: Any = None, **kw: Any) -> Any:
        """Verifies an attestation offline (see QWEDClient.verify_attestation)."""
        return self.client.verify_attestation(token, jwks, **kw)

    def rotate_token(self, **kw: Any) -> Any:
        """Rotates this agent's token; the client uses the new one from then on."""

        def adopt(reply: Any) -> Any:
            token = reply.get("agent_token") if isinstance(reply, Mapping) else None
            if token:
                from ._http import _Secret

                self.client._core.agent_token = _Secret(token)
            return reply

        return self._then(self.client.rotate_token(self.agent_id, **kw), adopt)

    def prepare_execute(self, business_id: str, request: JSON, **kw: Any) -> Any:
        """Prepares an execute as this agent (a confirmation token)."""
        return self.client.prepare_execute(business_id, request, agent_id=self.agent_id, **kw)

    def execute(self, business_id: str, request: JSON, **kw: Any) -> Any:
        """Executes a request at a business as this agent."""
        return self.client.execute(business_id, request, agent_id=self.agent_id, **kw)

    def a2a_intercept(self, message: Optional[JSON] = None, **kw: Any) -> Any:
        """Sends a message to another agent through the gate (this agent is the sender)."""
        kw.setdefault("sender_agent_id", self.agent_id)
        return self.client.a2a_intercept(message, **kw)


def _registration_args(
    name: str, type: str, principal_id: Optional[str], permissions: Optional[JSON], budget: Optional[JSON], kw: dict[str, Any]
) -> dict[str, Any]:
    reg = {k: kw.pop(k) for k in ("description", "framework", "model", "trust_level", "idempotency_key") if k in kw}
    return dict(name=name, type=type, principal_id=principal_id, permissions=permissions, budget=budget, **reg)


class QWEDAgentClient(_AgentBase):
    """One agent's client (QWED-Agent spec v1.1 §9.1): it holds the
    agent's id and token and numbers its actions' steps.

    Create it with :meth:`register`, or from an existing agent's id and
    token. Keywords are QWEDClient's (base_url, timeout, max_retries, ...).
    """

    client: QWEDClient

    _client_class = QWEDClient

    @classmethod
    def register(
        cls,
        name: str,
        principal_id: Optional[str] = None,
        permissions: Optional[JSON] = None,
        budget: Optional[JSON] = None,
        *,
        type: str = "supervised",
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        conversation_id: Optional[str] = None,
        **kw: Any,
    ) -> "QWEDAgentClient":
        """Registers an agent with api_key (else AGENTGATE_API_KEY) and
        returns its client; ``.registration`` holds the gate's answer."""
        args = _registration_args(name, type, principal_id, permissions, budget, kw)
        with QWEDClient(api_key, base_url=base_url, **kw) as admin:
            reg = admin.register_agent(**args)
        return cls(reg["agent_id"], reg["agent_token"], base_url=base_url, conversation_id=conversation_id,
                   registration=reg, **kw)

    def close(self) -> None:
        """Closes the pooled connections."""
        self.client.close()

    def __enter__(self) -> "QWEDAgentClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncQWEDAgentClient(_AgentBase):
    """QWEDAgentClient over AsyncQWEDClient: the same methods, awaitable."""

    client: AsyncQWEDClient

    _client_class = AsyncQWEDClient

    def _then(self, value: Any, fn: Callable[[Any], T]) -> Any:
        return _chain(value, fn)

    @classmethod
    async def register(
        cls,
        name: str,
        principal_id: Optional[str] = None,
        permissions: Optional[JSON] = None,
        budget: Optional[JSON] = None,
        *,
        type: str = "supervised",
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        conversation_id: Optional[str] = None,
        **kw: Any,
    ) -> "AsyncQWEDAgentClient":
        """Registers an agent and returns its async client."""
        args = _registration_args(name, type, principal_id, permissions, budget, kw)
        async with AsyncQWEDClient(api_key, base_url=base_url, **kw) as admin:
            reg = await admin.register_agent(**args)
        return cls(reg["agent_id"], reg["agent_token"], base_url=base_url, conversation_id=conversation_id,
                   registration=reg, **kw)

    async def close(self) -> None:
        """Closes the pooled connections."""
        await self.client.close()

    async def __aenter__(self) -> "AsyncQWEDAgentClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
