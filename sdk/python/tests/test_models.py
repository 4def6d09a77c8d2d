"""The generated result types: up to date with the OpenAPI document, and
dicts with typed attributes."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

from qwed_sdk import models
from qwed_sdk._endpoints import Endpoints
from qwed_sdk._model import Model

SDK = Path(__file__).resolve().parent.parent


def test_models_are_generated_from_the_current_document():
    """Fails when schemas/openapi.v1.json changed and _models.py was not regenerated."""
    r = subprocess.run(
        [sys.executable, str(SDK / "tools" / "gen_models.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr + "\nrun: python3 sdk/python/tools/gen_models.py"


def test_generator_output_depends_on_the_document(tmp_path):
    doc = {
        "openapi": "3.1.0",
        "paths": {
            "/x": {
                "get": {
                    "responses": {
                        "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}
                    }
                }
            }
        },
        "components": {
            "schemas": {
                "Thing": {
                    "type": "object",
                    "required": ["id"],
                    "description": "A thing.",
                    "properties": {
                        "id": {"type": "string"},
                        "items": {"type": "array", "items": {"$ref": "#/components/schemas/Part"}},
                        "kind": {"enum": ["a", "b"]},
                        "camelCase": {"type": ["integer", "null"]},
                        "flag": {"const": True},
                        "match": {"type": "string"},
                        "type": {"type": "string"},
                    },
                },
                "Part": {"type": "object", "properties": {"n": {"type": "number"}}},
            }
        },
    }
    src = tmp_path / "openapi.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "m.py"
    subprocess.run(
        [sys.executable, str(SDK / "tools" / "gen_models.py"), "--openapi", str(src), "--out", str(out)], check=True
    )
    text = out.read_text()
    assert "class Thing(Model):" in text and "class Part(Model):" in text
    assert "def items_(self) -> Optional[list[Part]]:" in text  # a dict method's name gets a _
    assert "def camel_case(self) -> Optional[int]:" in text
    assert 'def kind(self) -> Optional[Literal["a", "b"]]:' in text
    assert '"GET /x": (Thing,),' in text
    assert "def flag(self) -> Optional[Literal[True]]:" in text
    # soft keywords are names: the output may not depend on the Python that runs the generator
    assert "def match(self) -> Optional[str]:" in text and "def type(self) -> Optional[str]:" in text
    ns: dict = {}
    exec(compile(text.replace("from ._model import Model", "from qwed_sdk._model import Model"), "m", "exec"), ns)
    t = ns["Thing"]({"id": "t1", "items": [{"n": 1.5}], "camelCase": 3})
    assert t.id == t["id"] == "t1" and t.camel_case == 3 and t.kind is None
    assert isinstance(t.items_[0], ns["Part"]) and t.items_[0].n == 1.5
    assert json.loads(json.dumps(t)) == {"id": "t1", "items": [{"n": 1.5}], "camelCase": 3}


def test_models_are_dicts_with_attributes():
    d = models.DecisionReply(
        {
            "action_id": "act_1",
            "decision": "APPROVED",
            "verification": {"status": "VERIFIED"},
            "budget_remaining": {},
            "extra": {"nested": {"x": 1}},
        }
    )
    assert isinstance(d, dict) and isinstance(d, Model)
    assert d.decision == d["decision"] == "APPROVED"
    assert isinstance(d.verification, models.Verification) and d.verification.status == "VERIFIED"
    assert d.extra.nested.x == 1  # members the document does not name still read as attributes
    assert d.to_dict()["extra"] == {"nested": {"x": 1}} and type(d.to_dict()) is dict
    try:
        d.missing_member
    except AttributeError as e:
        assert "missing_member" in str(e)
    else:
        raise AssertionError("a missing member must raise AttributeError")
    assert models.RESPONSES["POST /agents/{id}/verify"] == (models.DecisionReply,)


ROUTE = re.compile(r'"((?:GET|POST|PUT|DELETE|PATCH) /[^"]*)"')


def _routes_of_methods() -> dict[str, list[str]]:
    """The routes each method of Endpoints names in its source."""
    out = {}
    for name, fn in inspect.getmembers(Endpoints, inspect.isfunction):
        routes = ROUTE.findall(inspect.getsource(fn))
        if routes:
            out[name] = routes
    return out


def test_every_route_of_the_document_has_a_method():
    """Every operation of schemas/openapi.v1.json is a method of the clients."""
    doc = json.loads((SDK.parent.parent / "schemas" / "openapi.v1.json").read_text())
    documented = {
        f"{m.upper()} {p}"
        for p, item in doc["paths"].items()
        for m in item
        if m in ("get", "post", "put", "delete", "patch")
    }
    used = {r for routes in _routes_of_methods().values() for r in routes}
    boundary = {f"{m} /a2a/boundary/{k}/{{agent}}" for m in ("POST", "DELETE") for k in ("trust", "block")}
    assert not (documented - used - boundary), f"routes without a method: {sorted(documented - used - boundary)}"
    assert not (used - documented), f"methods naming routes the document lacks: {sorted(used - documented)}"


def test_return_annotations_are_the_documented_answer_types():
    """A method's return annotation names its route's answer types (RESPONSES)."""
    own = {"ActionDecision": "DecisionReply", "ActivityPage": "Activity"}
    for name, routes in _routes_of_methods().items():
        ann = inspect.signature(getattr(Endpoints, name)).return_annotation
        named = [own.get(n, n) for n in re.findall(r"m\.(\w+)|\b(ActionDecision|ActivityPage)\b", ann) for n in n if n]
        expected = {c.__name__ for r in routes for c in models.RESPONSES.get(r, ())}
        if not expected:
            continue
        assert named and set(named) <= expected, f"{name} -> {ann}: the document answers {sorted(expected)}"
