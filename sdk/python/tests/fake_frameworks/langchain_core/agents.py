"""Stand-in for langchain_core.agents: an agent's decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentAction:
    tool: str
    tool_input: Any
    log: str = ""


@dataclass
class AgentFinish:
    return_values: dict[str, Any] = field(default_factory=dict)
    log: str = ""
