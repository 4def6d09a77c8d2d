#!/usr/bin/env python3
"""Generates qwed_sdk/_models.py, the SDK's result types, from the gate's
OpenAPI document (schemas/openapi.v1.json).

Every object schema of components.schemas becomes a ``Model`` (a dict)
subclass with one typed, documented property per member; nested objects,
lists and maps of objects are converted to their types when a result is
built. RESPONSES maps each route ("POST /agents/{id}/verify") to the
types of its successful answer (several when the document says anyOf), so
the clients name no type by hand.

Usage: gen_models.py [--check] [--openapi PATH] [--out PATH]
  --check  exit 1 (and say so) when the committed file differs.
Standard library only; the output depends on the document alone.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SDK = HERE.parent
REPO = SDK.parent.parent
DEFAULT_OPENAPI = REPO / "schemas" / "openapi.v1.json"
DEFAULT_OUT = SDK / "qwed_sdk" / "_models.py"

RESERVED = (
    set(dir(dict))
    | {"to_dict", "_fields"}
    | set(keyword.kwlist)
    | {"str", "int", "float", "bool", "list", "dict", "bytes"}
)
"""Names a property may not take (it gets a trailing _): dict's and
Model's attributes, keywords, and the builtins the annotations use (a
property named bytes would be what a later "-> bytes" in its class means).
Soft keywords (match, case, type) are names: they stay, so the output is
the same on every Python."""
METHODS = ("get", "put", "post", "delete", "patch")


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    s = re.sub(r"[^0-9a-z_]", "_", s)
    if s[:1].isdigit():
        s = "_" + s
    return s + "_" if s in RESERVED else s


def doc(text: str, indent: str) -> str:
    text = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(indent) + len(line) + len(word) + 1 > 96:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""\n'
    body = "\n".join(indent + ln for ln in lines)
    return f'{indent}"""\n{body}\n{indent}"""\n'


class Gen:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.schemas: dict[str, Any] = spec.get("components", {}).get("schemas", {})

    def is_class(self, name: str) -> bool:
        s = self.schemas.get(name)
        if not isinstance(s, dict):
            return False
        t = s.get("type")
        return (t == "object" or (isinstance(t, list) and "object" in t)) and bool(s.get("properties"))

    def resolve(self, s: Any) -> Any:
        while isinstance(s, dict) and "$ref" in s and not self.is_class(ref_name(s["$ref"])):
            s = self.schemas.get(ref_name(s["$ref"]), {})
        return s

    def pytype(self, s: Any, depth: int = 0) -> str:
        if not isinstance(s, dict) or depth > 20:
            return "Any"
        if "$ref" in s:
            name = ref_name(s["$ref"])
            if self.is_class(name):
                return name
            return self.pytype(self.schemas.get(name, {}), depth + 1)
        if "const" in s or "enum" in s:
            vals = s["enum"] if "enum" in s else [s["const"]]
            lits = [v for v in vals if v is not None]
            if not all(isinstance(v, (str, bool, int)) for v in lits):
                return "Any"  # Literal holds str, bool and int values only
            lit = (
                f"Literal[{', '.join(json.dumps(v) if isinstance(v, str) else repr(v) for v in lits)}]"
                if lits
                else "None"
            )
            return f"Optional[{lit}]" if None in vals and lits else lit
        for k in ("anyOf", "oneOf"):
            if k in s:
                return self.union([self.pytype(x, depth + 1) for x in s[k]])
        t = s.get("type")
        if isinstance(t, list):
            return self.union([self.pytype({**s, "type": x}, depth + 1) for x in t])
        if t == "string":
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        if t == "array":
            return f"list[{self.pytype(s.get('items', {}), depth + 1)}]"
        if t == "object":
            ap = s.get("additionalProperties")
            if isinstance(ap, dict) and ap:
                return f"dict[str, {self.pytype(ap, depth + 1)}]"
            return "dict[str, Any]"
        return "Any"

    @staticmethod
    def union(types: list[str]) -> str:
        out: list[str] = []
        for t in types:
            if t not in out:
                out.append(t)
        if "Any" in out:
            return "Any"
        if "None" in out:
            rest = [t for t in out if t != "None"]
            if not rest:
                return "None"
            inner = rest[0] if len(rest) == 1 else f"Union[{', '.join(rest)}]"
            return f"Optional[{inner}]"
        return out[0] if len(out) == 1 else f"Union[{', '.join(out)}]"

    def convert(self, s: Any, depth: int = 0) -> str | None:
        """The _fields spec of a member (None: kept as decoded)."""
        if not isinstance(s, dict) or depth > 20:
            return None
        if "$ref" in s:
            name = ref_name(s["$ref"])
            if self.is_class(name):
                return name
            return self.convert(self.schemas.get(name, {}), depth + 1)
        for k in ("anyOf", "oneOf"):
            if k in s:
                specs = {c for c in (self.convert(x, depth + 1) for x in s[k]) if c}
                return specs.pop() if len(specs) == 1 else None
        t = s.get("type")
        ts = t if isinstance(t, list) else [t]
        if "array" in ts:
            inner = self.convert(s.get("items", {}), depth + 1)
            return f'("list", {inner})' if inner else None
        if "object" in ts and isinstance(s.get("additionalProperties"), dict) and s["additionalProperties"]:
            inner = self.convert(s["additionalProperties"], depth + 1)
            return f'("map", {inner})' if inner else None
        if "object" in ts and s.get("properties"):
            return "Model"  # an inline object: a Model, so its members read as attributes
        return None

    def answer_classes(self, sch: Any) -> list[str]:
        """The classes a response schema names: a $ref, or an anyOf/oneOf of $refs."""
        if not isinstance(sch, dict):
            return []
        if "$ref" in sch:
            name = ref_name(sch["$ref"])
            return [name] if self.is_class(name) else []
        for k in ("anyOf", "oneOf"):
            if k in sch:
                names = [ref_name(x["$ref"]) for x in sch[k] if isinstance(x, dict) and "$ref" in x]
                if names and all(self.is_class(n) for n in names) and len(names) == len(sch[k]):
                    return names
        return []

    def responses(self) -> dict[str, list[str]]:
        """Each route's answer classes: those of its first 2xx response whose
        JSON content (application/json first, then any +json type) names
        classes."""
        out: dict[str, list[str]] = {}
        for p, item in sorted(self.spec.get("paths", {}).items()):
            for m in METHODS:
                op = item.get(m)
                if not isinstance(op, dict):
                    continue
                for code in sorted(op.get("responses", {})):
                    if not code.startswith("2"):
                        continue
                    r = op["responses"][code]
                    if "$ref" in r:
                        r = self.spec.get("components", {}).get("responses", {}).get(ref_name(r["$ref"]), {})
                    content = r.get("content", {})
                    types = ["application/json"] + sorted(t for t in content if t.endswith("+json"))
                    names = next(
                        (n for n in (self.answer_classes(content.get(t, {}).get("schema")) for t in types) if n), []
                    )
                    if names:
                        out[f"{m.upper()} {p}"] = names
                        break
        return out

    def render(self, source: str) -> str:
        names = sorted(n for n in self.schemas if self.is_class(n))
        o = [
            f"# Code generated by sdk/python/tools/gen_models.py from {source}; DO NOT EDIT.\n",
            "# fmt: off\n",
            '"""The result types of the gate\'s answers, one per object schema of the\n'
            "OpenAPI document: dicts (the JSON as sent) with typed attributes.\n"
            'RESPONSES maps a route ("POST /agents/{id}/verify") to its answer\'s types."""\n\n',
            "from __future__ import annotations\n\n",
            "from typing import Any, Literal, Optional, Union\n\n",
            "from ._model import Model\n\n",
            "__all__ = [\n",
        ]
        o += [f'    "{n}",\n' for n in names]
        o.append('    "RESPONSES",\n]\n')
        fields: list[str] = []
        for n in names:
            s = self.schemas[n]
            o.append(f"\n\nclass {n}(Model):\n")
            o.append(doc(s.get("description") or s.get("title") or f"The {n} object of the gate's API.", "    "))
            required = set(s.get("required", []))
            if required:
                o.append(f"\n    _required = frozenset({{{', '.join(json.dumps(r) for r in sorted(required))}}})\n")
            conv: list[str] = []
            for member in sorted(s["properties"]):
                ps = s["properties"][member]
                t = self.pytype(ps)
                if member not in required and not t.startswith("Optional[") and t not in ("Any", "None"):
                    t = f"Optional[{t}]"
                o.append(f"\n    @property\n    def {snake(member)}(self) -> {t}:\n")
                rs = self.resolve(ps)
                d = (ps.get("description") if isinstance(ps, dict) else None) or (
                    rs.get("description") if isinstance(rs, dict) else None
                )
                o.append(doc(d or f'The "{member}" member.', "        "))
                o.append(f"        return self.get({json.dumps(member)})  # type: ignore[no-any-return]\n")
                c = self.convert(ps)
                if c:
                    conv.append(f"    {json.dumps(member)}: {c},\n")
            if conv:
                fields.append(f"{n}._fields = {{\n" + "".join(conv) + "}\n")
        o.append("\n\n")
        o += fields
        o.append("\nRESPONSES: dict[str, tuple[type[Model], ...]] = {\n")
        o += [f"    {json.dumps(route)}: ({', '.join(names)},),\n" for route, names in self.responses().items()]
        o.append("}\n")
        o.append(
            '"""The classes of each route\'s successful answer; of several, the\n'
            'one whose required members the answer holds, the most of them, wins."""\n'
        )
        return "".join(o)


def generate(openapi: Path = DEFAULT_OPENAPI) -> str:
    spec = json.loads(openapi.read_text(encoding="utf-8"))
    try:
        source = openapi.resolve().relative_to(REPO).as_posix()
    except ValueError:
        source = openapi.name
    return Gen(spec).render(source)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--openapi", type=Path, default=DEFAULT_OPENAPI)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    text = generate(a.openapi)
    if a.check:
        if not a.out.exists() or a.out.read_text(encoding="utf-8") != text:
            print(f"{a.out} is stale: run sdk/python/tools/gen_models.py", file=sys.stderr)
            return 1
        return 0
    a.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
