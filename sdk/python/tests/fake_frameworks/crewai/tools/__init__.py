"""Stand-in for crewai.tools: BaseTool (run calls _run; the structured tool
calls _run), Tool (_run calls func)."""

from __future__ import annotations

from typing import Any, Callable


class StructuredTool:
    def __init__(self, name: str, func: Callable[..., Any]) -> None:
        self.name = name
        self.func = func

    def invoke(self, arguments: dict[str, Any]) -> Any:
        return self.func(**arguments)


class BaseTool:
    name: str = ""
    description: str = ""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(*args, **kwargs)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def to_structured_tool(self) -> StructuredTool:
        return StructuredTool(self.name, self._run)


class Tool(BaseTool):
    def __init__(self, name: str, func: Callable[..., Any], description: str = "") -> None:
        self.name = name
        self.description = description
        self.func = func

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)
