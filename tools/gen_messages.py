"""Generate `protocol/messages/*.py` from Apache Kafka's JSON message specs.

    python tools/gen_messages.py ../shared/kafka-message-specs

Only request and response messages are generated (headers are hand-written in protocol/headers.py). The output
holds our own dataclasses and schema data; none of the specs' text or comments is copied.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

PRIMITIVES = {
    "int8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "float64",
    "bool",
    "string",
    "bytes",
    "records",
    "uuid",
}
PY_TYPES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint16": "int",
    "uint32": "int",
    "float64": "float",
    "bool": "bool",
    "string": "str",
    "bytes": "bytes",
    "records": "bytes | memoryview",
    "uuid": "uuid.UUID",
}


def load_spec(path: Path) -> dict[str, Any]:
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
    spec: dict[str, Any] = json.loads(text)
    return spec


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s).lower()
    return s + "_" if keyword.iskeyword(s) else s


def module_name(spec_name: str) -> str:
    return snake(spec_name)


def parse_versions(text: str | None) -> tuple[int, int]:
    if text is None or text == "none":
        return (1, 0)
    if text.endswith("+"):
        return (int(text[:-1]), 0x7FFF)
    if "-" in text:
        lo, hi = text.split("-")
        return (int(lo), int(hi))
    return (int(text), int(text))


class Gen:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.common = {s["name"]: s for s in spec.get("commonStructs", [])}
        self.classes: list[str] = []  # python source of dataclasses, dependencies first
        self.schemas: list[str] = []
        self.done: set[str] = set()

    def struct(self, name: str, fields: list[dict[str, Any]]) -> str:
        """Emit the class and schema of struct `name`; returns the schema variable name."""
        var = f"_{name}_SCHEMA"
        if name in self.done:
            return var
        self.done.add(name)
        lines = ["", "", "@dataclass(kw_only=True, slots=True)", f"class {name}:"]
        field_src = []
        for f in fields:
            attr = snake(f["name"])
            ftype: str = f["type"]
            array = ftype.startswith("[]")
            base = ftype[2:] if array else ftype
            nullable = parse_versions(f.get("nullableVersions"))
            is_nullable = nullable[0] <= nullable[1]
            default_raw = f.get("default")
            struct_var = "None"
            if base in PRIMITIVES:
                kind = base
                py = PY_TYPES[base]
            else:
                kind = "struct"
                sub_fields = f.get("fields")
                if sub_fields is None:
                    sub_fields = self.common[base]["fields"]
                struct_var = self.struct(base, sub_fields)
                py = base
            if array:
                ann = f"list[{py}]"
                if default_raw == "null":
                    ann += " | None"
                    dflt_src, dflt_val = "None", "None"
                else:
                    dflt_src, dflt_val = "field(default_factory=list)", "[]"
            elif kind == "struct":
                if default_raw == "null" or is_nullable:
                    ann = f"{py} | None"
                    dflt_src = dflt_val = "None" if default_raw == "null" else f"field(default_factory={py})"
                    if default_raw != "null":
                        ann = f"{py} | None"
                        dflt_val = "None"
                else:
                    ann = py
                    dflt_src = f"field(default_factory={py})"
                    dflt_val = "None"
            else:
                ann, dflt = self.primitive_default(kind, default_raw, is_nullable)
                dflt_src = dflt_val = dflt
                if is_nullable and "None" not in ann:
                    ann += " | None"
            lines.append(f"    {attr}: {ann} = {dflt_src}")
            tag = None if f.get("tag") is None else int(f["tag"])
            tagged = parse_versions(f.get("taggedVersions")) if tag is not None else (1, 0)
            versions = parse_versions(f.get("versions"))
            field_src.append(
                f"        Field({attr!r}, {kind!r}, {array}, Versions{versions}, Versions{nullable}, {tag!r}, "
                f"Versions{tagged}, {dflt_val}, {struct_var}),"
            )
        if not fields:
            lines.append("    pass")
        self.classes.append("\n".join(lines))
        body = "\n".join(field_src)
        self.schemas.append(
            f"{var} = StructSchema(\n    {name},\n    (\n{body}\n    ),\n)"
            if fields
            else f"{var} = StructSchema({name}, ())"
        )
        return var

    @staticmethod
    def primitive_default(kind: str, raw: Any, nullable: bool) -> tuple[str, str]:
        py = PY_TYPES[kind]
        if raw == "null":
            return f"{py} | None", "None"
        if kind in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
            if raw is None or raw == "":
                return py, "0"
            text = str(raw)
            return py, str(int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text))
        if kind == "float64":
            return py, repr(float(raw)) if raw not in (None, "") else "0.0"
        if kind == "bool":
            return py, "True" if str(raw).lower() == "true" else "False"
        if kind == "string":
            return py, repr(raw if isinstance(raw, str) else "")
        if kind == "bytes":
            return py, "b''"
        if kind == "records":
            return f"{py} | None", "None"
        if kind == "uuid":
            return py, "ZERO_UUID"
        raise ValueError(kind)

    def module(self) -> str:
        spec = self.spec
        name = spec["name"]
        var = self.struct(name, spec["fields"])
        valid = parse_versions(spec["validVersions"])
        flexible = parse_versions(spec.get("flexibleVersions"))
        head = [
            f'"""{name} (API key {spec["apiKey"]}), generated from Kafka 3.9\'s message spec by tools/gen_messages.py.',
            "",
            "Do not edit by hand: run the generator again.",
            '"""',
            "",
            "# ruff: noqa",
            "from __future__ import annotations",
            "",
            "import uuid",
            "from dataclasses import dataclass, field",
            "",
            "from protocol.primitives import ZERO_UUID",
            "from protocol.schema import Field, MessageSchema, StructSchema, Versions",
        ]
        tail = [
            "",
            "",
            *self.schemas,
            "",
            f"SCHEMA = MessageSchema({spec['apiKey']}, {spec['type']!r}, {name!r}, "
            f"Versions{valid}, Versions{flexible}, {var})",
            "",
        ]
        return "\n".join(head) + "\n".join(self.classes) + "\n" + "\n".join(tail)


def main() -> None:
    specs_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/kafka-message-specs")
    out = Path(__file__).resolve().parent.parent / "protocol" / "messages"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.py"):
        old.unlink()
    index: list[tuple[int, str, str, str]] = []
    for path in sorted(specs_dir.glob("*.json")):
        spec = load_spec(path)
        if spec.get("type") not in ("request", "response"):
            continue
        mod = module_name(spec["name"])
        (out / f"{mod}.py").write_text(Gen(spec).module())
        index.append((spec["apiKey"], spec["type"], mod, spec["name"]))
    lines = [
        '"""Every Kafka request and response message, generated by tools/gen_messages.py; see protocol/codec.py."""',
        "",
        "# ruff: noqa",
        "from __future__ import annotations",
        "",
        "from enum import IntEnum",
        "",
        "from protocol.schema import MessageSchema",
        "",
    ]
    for _key, _kind, mod, cls in index:
        lines.append(f"from protocol.messages.{mod} import SCHEMA as _{cls}, {cls}")
    lines += ["", "REQUESTS: dict[int, type] = {"]
    lines += [f"    {key}: {cls}," for key, kind, _m, cls in index if kind == "request"]
    lines += ["}", "RESPONSES: dict[int, type] = {"]
    lines += [f"    {key}: {cls}," for key, kind, _m, cls in index if kind == "response"]
    lines += ["}", "SCHEMAS: dict[type, MessageSchema] = {"]
    lines += [f"    {cls}: _{cls}," for _k, _kind, _m, cls in index]
    lines += [
        "}",
        "",
        "",
        "class ApiKey(IntEnum):",
        '    """Kafka\'s API keys, named after their requests."""',
        "",
    ]
    requests = sorted((key, cls) for key, kind, _m, cls in index if kind == "request")
    lines += [f"    {snake(cls.removesuffix('Request')).upper()} = {key}" for key, cls in requests]
    lines += [""]
    (out / "__init__.py").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
