"""A stand-in for crewai (see ../README.md): Agent and tools."""

from __future__ import annotations

from typing import Any


class Agent:
    """crewai.Agent's fields that matter here; role, goal and backstory are
    required, as in CrewAI."""

    def __init__(self, *, role: str, goal: str, backstory: str, tools: list | None = None, **fields: Any) -> None:
        self.role = role
        self.goal = goal
        self.backstory = backstory
        self.tools = list(tools or [])
        self.fields = fields

    def use(self, tool_name: str, **arguments: Any) -> Any:
        """What CrewAI's executor does with a tool the model picked: it
        calls the structured tool made from it."""
        for tool in self.tools:
            if tool.name == tool_name:
                return tool.to_structured_tool().invoke(arguments)
        raise KeyError(tool_name)
