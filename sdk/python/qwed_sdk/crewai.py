"""CrewAI integration: every tool of an agent is verified by the gate before
it runs (QWED-Agent spec v1.1 §9.3; the QWED-Agent user guide's "Framework
integration").

Both shapes of the specs work:

    from qwed_sdk.crewai import QWEDVerifiedAgent

    verified_agent = QWEDVerifiedAgent(
        agent=researcher,                       # an existing crewai.Agent
        qwed_settings={"verify_all_tools": True, "require_attestation": True,
                       "agent_id": "agent_abc123", "agent_token": "qwed_agent_..."},
    )

    analyst = QWEDVerifiedAgent(                # a new crewai.Agent
        role="Analyst", goal="Analyze data", agent_id="agent_abc123", tools=[...],
    )

``QWEDVerifiedAgent(...)`` returns the CrewAI ``Agent`` itself (so a
``Crew`` accepts it as any agent) with each of its tools verified: the
tool's implementation (``_run`` for a CrewAI ``BaseTool``, which both
``run`` and the structured tool CrewAI's executor builds call; else
``func``; else ``run``) is replaced on that tool object by a wrapper that
asks the gate (``POST /agents/{id}/tools/{tool}``) first. Anything but
APPROVED raises :class:`~qwed_sdk._guard.ToolCallDenied` with the gate's code
and reason, and the tool does not run; the outcome is logged afterwards
(``POST /agents/{id}/executions``), with the attestation when
``require_attestation`` is set (verified offline before the tool runs).

The agent's ``execute_task`` (CrewAI's ``Agent.execute_task(task, context,
tools)``) is wrapped too: each task it executes is a conversation of its own
(the gate's loop controls and its 50-step cap apply per task), and the tools
the task brings (``tools``) are verified like the agent's. Tools called
outside a task share the agent's conversation (``conversation_id``, else a
fresh one). :func:`verify_tools` wraps other tools.

CrewAI is imported only to build an agent from ``role=``/``goal=``; the
``agent=`` shape wraps any object with a ``tools`` list, so it works without
CrewAI.

``qwed_settings`` keys: ``agent_id``, ``agent_token``, ``base_url``,
``api_key``, ``verify_all_tools`` (default True; False verifies only the
tool names in ``verify_tools``), ``verify_tools``, ``require_attestation``
(default False), ``log_executions`` (default True), ``conversation_id``,
``wait_for_approval`` (seconds to wait for a principal to grant a PENDING
call; default 0, refused at once).
Keyword arguments of the same names take precedence.
"""

from __future__ import annotations

import contextvars
import functools
import secrets
from typing import Any, Iterable, Optional

from ._guard import ToolCallDenied, ToolGuard

__all__ = ["QWEDVerifiedAgent", "verify_tools", "ToolCallDenied"]

_SETTINGS = frozenset({
    "agent_id", "agent_token", "base_url", "api_key", "client", "verify_all_tools",
    "verify_tools", "require_attestation", "log_executions", "conversation_id", "jwks", "wait_for_approval",
})  # fmt: skip
_DEFAULT_BACKSTORY = "An agent whose tool calls are verified by agentgate before they run."


def _tool_name(tool: Any) -> str:
    name = getattr(tool, "name", None) or getattr(getattr(tool, "func", None), "__name__", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"tool {tool!r} has no name")
    return name


def _call_parameters(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A tool call's arguments as the parameters the gate sees."""
    if not args:
        return kwargs
    if len(args) == 1 and not kwargs:
        return args[0] if isinstance(args[0], dict) else {"input": args[0]}
    return {"args": list(args), **kwargs}


def _wrap(tool: Any, guard: ToolGuard) -> Any:
    """Replaces tool's implementation by one verified by guard (once)."""
    if getattr(tool, "_qwed_guard", None) is not None:
        return tool
    name = _tool_name(tool)
    for attr in ("_run", "func", "run"):
        inner = getattr(tool, attr, None)
        if callable(inner):
            break
    else:
        raise TypeError(f"tool {name!r} has no _run, func or run to verify")

    @functools.wraps(inner)
    def verified(*args: Any, **kwargs: Any) -> Any:
        if not guard.covers(name):
            return inner(*args, **kwargs)
        approval = guard.check(name, _call_parameters(args, kwargs), _TASK_CONVERSATION.get())
        try:
            result = inner(*args, **kwargs)
        except BaseException:
            guard.record(approval, False)
            raise
        guard.record(approval, True)
        return result

    # object.__setattr__: CrewAI tools are pydantic models, which refuse an
    # assignment to a name that is neither a field nor private ("run").
    object.__setattr__(tool, attr, verified)
    object.__setattr__(tool, "_qwed_guard", guard)
    return tool


_TASK_CONVERSATION: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "qwed_crewai_task_conversation", default=None
)
"""The conversation of the task running in this context (None: the guard's own)."""


def _wrap_execute_task(agent: Any, guard: ToolGuard) -> None:
    """Makes each task the agent executes a conversation of its own (so
    the gate's loop controls and 50-step cap apply per task), and verifies
    the tools the task brings (CrewAI's ``Agent.execute_task(task, context,
    tools)`` gets a task's own tools in ``tools``)."""
    inner = getattr(agent, "execute_task", None)
    if not callable(inner) or getattr(inner, "_qwed_guard", None) is not None:
        return

    @functools.wraps(inner)
    def execute_task(*args: Any, **kwargs: Any) -> Any:
        task_tools = kwargs.get("tools") if "tools" in kwargs else (args[2] if len(args) > 2 else None)
        if task_tools:
            verify_tools(task_tools, guard)
        conversation = f"crew_{secrets.token_hex(8)}"
        token = _TASK_CONVERSATION.set(conversation)
        try:
            return inner(*args, **kwargs)
        finally:
            _TASK_CONVERSATION.reset(token)
            guard.end_conversation(conversation)

    execute_task._qwed_guard = guard  # type: ignore[attr-defined]
    object.__setattr__(agent, "execute_task", execute_task)


def verify_tools(tools: Iterable[Any], guard: Optional[ToolGuard] = None, **settings: Any) -> list[Any]:
    """Wraps each tool (in place) so that the gate verifies its calls;
    returns them as a list. Pass a ToolGuard, or the settings of
    :class:`QWEDVerifiedAgent` (``agent_id=`` …) to make one."""
    if guard is None:
        guard = _guard(settings)
    return [_wrap(tool, guard) for tool in tools]


def _guard(settings: dict[str, Any]) -> ToolGuard:
    unknown = set(settings) - _SETTINGS
    if unknown:
        raise TypeError(f"unknown qwed settings: {sorted(unknown)}")
    verify_all = settings.get("verify_all_tools", True)
    names = settings.get("verify_tools")
    if not verify_all and names is None:
        names = []
    return ToolGuard(
        settings.get("agent_id") or "",
        settings.get("agent_token"),
        base_url=settings.get("base_url"),
        api_key=settings.get("api_key"),
        client=settings.get("client"),
        require_attestation=bool(settings.get("require_attestation", False)),
        jwks=settings.get("jwks"),
        conversation_id=settings.get("conversation_id"),
        log_executions=settings.get("log_executions", True),
        verify_tools=None if verify_all else list(names),
        wait_for_approval=float(settings.get("wait_for_approval", 0.0)),
    )


def _crewai_agent() -> type:
    try:
        from crewai import Agent
    except ImportError:
        raise ImportError(
            "QWEDVerifiedAgent(role=..., goal=...) builds a crewai.Agent, and crewai is not "
            "installed: pip install crewai, or pass agent=<an agent with .tools> or agent_class="
        ) from None
    return Agent


class QWEDVerifiedAgent:
    """Puts the gate in front of every tool of a CrewAI agent; returns the
    agent (see the module documentation).

    Args:
        agent: an existing agent (anything with a ``tools`` list).
        qwed_settings: the gate's settings (see the module documentation).
        agent_class: the class built from the agent fields (default
            ``crewai.Agent``).
        **fields: either settings (``agent_id=``, ``agent_token=``, …) or,
            without ``agent``, the new agent's fields (``role=``, ``goal=``,
            ``backstory=``, ``tools=``, …).
    """

    def __new__(  # type: ignore[misc]
        cls,
        agent: Any = None,
        qwed_settings: Optional[dict[str, Any]] = None,
        *,
        agent_class: Optional[type] = None,
        **fields: Any,
    ) -> Any:
        settings = dict(qwed_settings or {})
        settings.update({k: fields.pop(k) for k in list(fields) if k in _SETTINGS})
        guard = _guard(settings)
        if agent is None:
            if not fields.get("role") or not fields.get("goal"):
                raise TypeError("QWEDVerifiedAgent needs agent= or role= and goal=")
            fields.setdefault("backstory", _DEFAULT_BACKSTORY)
            agent = (agent_class or _crewai_agent())(**fields)
        elif fields:
            raise TypeError(f"agent= is given, so these are not settings: {sorted(fields)}")
        tools = getattr(agent, "tools", None)
        if tools is None:
            raise TypeError(f"{type(agent).__name__} has no tools list to verify")
        verify_tools(tools, guard)
        _wrap_execute_task(agent, guard)
        return agent
