"""A stand-in for crewai (see ../README.md): Agent, Task and tools."""

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

    def use(self, tool_name: str, tools: list | None = None, **arguments: Any) -> Any:
        """What CrewAI's executor does with a tool the model picked: it
        calls the structured tool made from it."""
        for tool in list(tools or []) + self.tools:
            if tool.name == tool_name:
                return tool.to_structured_tool().invoke(arguments)
        raise KeyError(tool_name)

    def execute_task(self, task: Any, context: str | None = None, tools: list | None = None) -> str:
        """CrewAI's entry point for one task (Crew passes the task's own
        tools in tools): here, the task's scripted tool uses."""
        results = [self.use(name, tools=tools, **arguments) for name, arguments in task.uses]
        return f"{task.description}: {results}"


class Task:
    """A task, and (standing in for the model) the tool uses its execution makes."""

    def __init__(self, description: str, uses: list[tuple[str, dict[str, Any]]], tools: list | None = None) -> None:
        self.description = description
        self.uses = uses
        self.tools = list(tools or [])
