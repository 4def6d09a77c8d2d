"""Stand-in for langchain_core.tools.BaseTool.run's use of callbacks."""

from __future__ import annotations

import uuid
from typing import Any, Callable

from .callbacks import handle_event


class BaseTool:
    def __init__(self, name: str, func: Callable[..., Any], description: str = "") -> None:
        self.name = name
        self.description = description
        self.func = func

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def run(self, tool_input: Any, callbacks: list | None = None, **kwargs: Any) -> Any:
        handlers = list(callbacks or [])
        run_id = uuid.uuid4()
        handle_event(
            handlers,
            "on_tool_start",
            {"name": self.name, "description": self.description},
            tool_input if isinstance(tool_input, str) else str(tool_input),
            run_id=run_id,
            parent_run_id=None,
            tags=[],
            metadata={},
            inputs=tool_input if isinstance(tool_input, dict) else None,
            name=self.name,
        )
        try:
            out = self._run(**tool_input) if isinstance(tool_input, dict) else self._run(tool_input)
        except Exception as exc:
            handle_event(handlers, "on_tool_error", exc, run_id=run_id, parent_run_id=None)
            raise
        handle_event(handlers, "on_tool_end", out, run_id=run_id, parent_run_id=None)
        return out
