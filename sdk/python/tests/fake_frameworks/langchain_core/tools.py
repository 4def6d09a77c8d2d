"""Stand-in for langchain_core.tools.BaseTool.run's use of callbacks."""

from __future__ import annotations

import uuid
from typing import Any, Callable

from .callbacks import CallbackManager, handle_event


class BaseTool:
    def __init__(self, name: str, func: Callable[..., Any], description: str = "") -> None:
        self.name = name
        self.description = description
        self.func = func

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def run(self, tool_input: Any, callbacks: list | CallbackManager | None = None, **kwargs: Any) -> Any:
        """on_tool_start, the tool, then on_tool_end or on_tool_error: to the
        handlers given (a list: this run is a root; a CallbackManager: the
        child of its parent run)."""
        if isinstance(callbacks, CallbackManager):
            handlers, parent = callbacks.handlers, callbacks.parent_run_id
        else:
            handlers, parent = list(callbacks or []), None
        run_id = uuid.uuid4()
        handle_event(
            handlers, "on_tool_start", None, {"name": self.name, "description": self.description},
            tool_input if isinstance(tool_input, str) else str(tool_input),
            run_id=run_id, parent_run_id=parent, tags=[], metadata={},
            inputs=tool_input if isinstance(tool_input, dict) else None, name=self.name,
        )  # fmt: skip
        try:
            out = self._run(**tool_input) if isinstance(tool_input, dict) else self._run(tool_input)
        except Exception as exc:
            handle_event(handlers, "on_tool_error", None, exc, run_id=run_id, parent_run_id=parent)
            raise
        handle_event(handlers, "on_tool_end", None, out, run_id=run_id, parent_run_id=parent)
        return out
