"""Stand-in for langchain_core.callbacks: the handler base and the event
dispatch rule of LangChain's callback manager."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("fake_langchain")


class BaseCallbackHandler:
    """LangChain's handler base: flags, and a no-op per event."""

    raise_error: bool = False
    run_inline: bool = False

    @property
    def ignore_agent(self) -> bool:
        return False

    def on_tool_start(
        self, serialized, input_str, *, run_id, parent_run_id=None, tags=None, metadata=None, inputs=None, **kwargs: Any
    ) -> Any:
        return None

    def on_tool_end(self, output, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None

    def on_tool_error(self, error, *, run_id, parent_run_id=None, **kwargs: Any) -> Any:
        return None


def handle_event(handlers: list[BaseCallbackHandler], event: str, *args: Any, **kwargs: Any) -> None:
    """Calls event on every handler. A handler's exception is logged and
    dropped, unless that handler's raise_error is true: then it propagates."""
    for handler in handlers:
        try:
            getattr(handler, event)(*args, **kwargs)
        except Exception as exc:
            log.warning("Error in %s.%s callback: %r", type(handler).__name__, event, exc)
            if handler.raise_error:
                raise
