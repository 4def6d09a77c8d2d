"""Stand-in for langchain_core.callbacks: the handler base, the event
dispatch rule of LangChain's callback manager, and the handlers a child run
inherits."""

from __future__ import annotations

import logging
from typing import Any, Optional
from uuid import UUID

log = logging.getLogger("fake_langchain")


class BaseCallbackHandler:
    """LangChain's handler base: flags, and a no-op per event."""

    raise_error: bool = False
    run_inline: bool = False

    @property
    def ignore_agent(self) -> bool:
        return False

    @property
    def ignore_chain(self) -> bool:
        return False

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_chain_error(self, error, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_agent_action(self, action, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_agent_finish(self, finish, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_tool_start(
        self, serialized, input_str, *, run_id, parent_run_id=None, tags=None, metadata=None, inputs=None, **kwargs: Any
    ) -> Any:
        return None

    def on_tool_end(self, output, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_tool_error(self, error, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None


class CallbackManager:
    """The handlers a child run gets (its parent's inheritable ones) and its
    parent's run id."""

    def __init__(self, handlers: list[BaseCallbackHandler], parent_run_id: Optional[UUID] = None) -> None:
        self.handlers = list(handlers)
        self.parent_run_id = parent_run_id


def handle_event(
    handlers: list[BaseCallbackHandler], event: str, ignore: Optional[str], *args: Any, **kwargs: Any
) -> None:
    """Calls event on every handler not ignoring it. A handler's exception
    is logged and dropped, unless that handler's raise_error is true: then
    it propagates."""
    for handler in handlers:
        try:
            if ignore is None or not getattr(handler, ignore):
                getattr(handler, event)(*args, **kwargs)
        except Exception as exc:
            log.warning("Error in %s.%s callback: %r", type(handler).__name__, event, exc)
            if handler.raise_error:
                raise
