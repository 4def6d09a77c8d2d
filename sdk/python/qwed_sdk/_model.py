"""The base of the result types: a dict with typed attributes.

Every result is a ``dict`` subclass holding the gate's JSON answer as sent,
so ``result["decision"]``, ``json.dumps(result)`` and ``dict`` equality work;
the generated subclasses (``_models.py``) add typed, documented attributes
(``result.decision``), and nested objects are converted to their own types
when the result is built. A member the document does not name is still
readable as an attribute (``result.some_new_member``) and as an item.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

__all__ = ["Model", "SECRET_KEYS"]

SECRET_KEYS = frozenset({"agent_token", "api_key", "confirmationToken", "confirmation_token", "secret"})
"""Members whose value a repr masks (the value itself is kept)."""


def _convert(spec: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(spec, tuple):
        kind, inner = spec
        if kind == "list" and isinstance(value, list):
            return [_convert(inner, v) for v in value]
        if kind == "map" and isinstance(value, dict):
            return {k: _convert(inner, v) for k, v in value.items()}
        return value
    if isinstance(value, dict) and not isinstance(value, spec):
        return spec(value)
    return value


class Model(dict):  # type: ignore[type-arg]
    """A JSON object of the gate's answers, with attribute access."""

    _required: ClassVar[frozenset[str]] = frozenset()
    """The members the document requires."""

    _fields: ClassVar[Mapping[str, Any]] = {}
    """Nested members converted on construction: name -> Model subclass,
    ("list", spec) or ("map", spec)."""

    def __init__(self, data: Mapping[str, Any] | None = None, /, **kw: Any) -> None:
        super().__init__(data or (), **kw)
        for k, spec in self._fields.items():
            v = dict.get(self, k)
            if v is not None:
                dict.__setitem__(self, k, _convert(spec, v))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            v = self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no member {name!r}") from None
        if type(v) is dict:
            v = Model(v)
            dict.__setitem__(self, name, v)
        return v

    def __repr__(self) -> str:
        shown = {k: ("***" if k in SECRET_KEYS and v else v) for k, v in self.items()}
        return f"{type(self).__name__}({shown!r})"

    __str__ = __repr__

    def to_dict(self) -> dict[str, Any]:
        """A plain deep copy of the answer (dicts and lists only)."""
        return _plain(self)


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v
