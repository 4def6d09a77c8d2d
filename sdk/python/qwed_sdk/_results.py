"""Result types with behaviour beyond the generated ones: the decision of
an action (``verified_query``) and a page of the activity log (iterable
over its entries, as the QWED-Agent user guide's ``for entry in
activity``)."""

from __future__ import annotations

from typing import Any, Iterator, Optional, Union, overload

from ._model import Model
from ._models import RESPONSES, Activity, DecisionReply

__all__ = ["ActionDecision", "ActivityPage", "model_for"]


class ActionDecision(DecisionReply):
    """The gate's decision on an action or a tool call (QWED-Agent spec
    v1.1 §4.2), whatever its HTTP status: ``APPROVED``, ``DENIED`` (with
    ``error``), ``CORRECTED`` (with ``corrected_action``), ``PENDING``
    (with ``approval``) or ``BUDGET_EXCEEDED`` (with ``error``)."""

    _action: Optional[dict[str, Any]] = None

    @property
    def approved(self) -> bool:
        """Whether the decision is APPROVED."""
        return self.get("decision") == "APPROVED"

    @property
    def verified_query(self) -> Optional[str]:
        """The query to run: the corrected action's when the gate
        CORRECTED it, else the query of the action that was verified (None
        when it had none)."""
        corrected = self.get("corrected_action")
        if isinstance(corrected, dict) and corrected.get("query") is not None:
            return corrected["query"]
        if self._action is not None:
            return self._action.get("query")
        return None


class ActivityPage(Activity):
    """A page of an agent's activity log (QWED-Agent spec v1.1 §7.2).

    The answer as sent (``page["summary"]``, ``page.period``,
    ``page.next_after_seq``); iterating it, ``len()`` and integer indexes
    go over its entries (``page.activities``), each with
    ``entry["timestamp"]``, ``entry["decision"]``, ...
    """

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        return iter(self.get("activities") or [])

    def __len__(self) -> int:
        return len(self.get("activities") or [])

    @overload
    def __getitem__(self, key: int) -> Any:
        ...

    @overload
    def __getitem__(self, key: str) -> Any:
        ...

    def __getitem__(self, key: Union[int, str]) -> Any:
        if isinstance(key, int):
            return (self.get("activities") or [])[key]
        return super().__getitem__(key)

    def keys(self):  # type: ignore[override]
        return dict.keys(self)


def pick(classes: tuple[type[Model], ...], body: dict[str, Any]) -> type[Model]:
    """Of an answer's possible classes, the one whose required members body
    holds, the most of them (Model when none fits)."""
    best: type[Model] = Model
    most = -1
    for cls in classes:
        if cls._required <= body.keys() and len(cls._required) > most:
            best, most = cls, len(cls._required)
    return best


def model_for(route: str) -> Any:
    """The decoder of the answers of route ("POST /agents/{id}/verify")."""
    classes = RESPONSES.get(route, ())

    def decode(body: Any) -> Any:
        if isinstance(body, dict):
            return pick(classes, body)(body)
        if isinstance(body, list):
            return [pick(classes, v)(v) if isinstance(v, dict) else v for v in body]
        return body

    return decode
