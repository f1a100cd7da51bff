"""The committed `protocol/messages/` is exactly what tools/gen_messages.py makes from Kafka's JSON specs now.

The generator is run on a copy of itself in a temporary tree (it writes next to its own `tools/` directory and clears
the target first), so the real package is never touched; the outputs are then compared file by file. A failure means
someone edited generated code by hand, changed the generator without regenerating, or the specs changed: run
`python tools/gen_messages.py ../shared/kafka-message-specs` and review the diff.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.schema import StructSchema

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO.parent / "shared" / "kafka-message-specs"
MESSAGES = REPO / "protocol" / "messages"

pytestmark = pytest.mark.skipif(
    not SPECS.is_dir() or not any(SPECS.glob("*.json")),
    reason="Kafka's JSON message specs are not beside the project (../shared/kafka-message-specs)",
)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("regen")
    (root / "tools").mkdir()
    (root / "protocol").mkdir()
    shutil.copy(REPO / "tools" / "gen_messages.py", root / "tools" / "gen_messages.py")
    subprocess.run(
        [sys.executable, str(root / "tools" / "gen_messages.py"), str(SPECS)],
        check=True,
        cwd=root,
        capture_output=True,
        timeout=120,
    )
    return root / "protocol" / "messages"


def test_same_modules(regenerated: Path) -> None:
    committed = sorted(p.name for p in MESSAGES.glob("*.py"))
    fresh = sorted(p.name for p in regenerated.glob("*.py"))
    assert committed == fresh, f"missing: {set(fresh) - set(committed)}, extra: {set(committed) - set(fresh)}"


def test_same_contents(regenerated: Path) -> None:
    drifted = []
    for fresh in sorted(regenerated.glob("*.py")):
        committed = MESSAGES / fresh.name
        if not committed.exists():
            continue
        a, b = committed.read_text(), fresh.read_text()
        if a != b:
            diff = difflib.unified_diff(
                a.splitlines(),
                b.splitlines(),
                f"committed/{fresh.name}",
                f"regenerated/{fresh.name}",
                lineterm="",
            )
            drifted.append("\n".join(list(diff)[:40]))
    assert not drifted, "generated messages drifted from the specs:\n" + "\n\n".join(drifted)


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def test_every_spec_is_generated_with_its_versions() -> None:
    """Independently of the generator: each request/response spec has a class whose valid and flexible versions are
    the spec's, and whose top-level fields are the spec's in order."""
    from protocol.messages import REQUESTS, RESPONSES, SCHEMAS

    by_name = {schema.name: schema for schema in SCHEMAS.values()}
    seen = set()
    for path in sorted(SPECS.glob("*.json")):
        spec = json.loads(_strip_comments(path.read_text()))
        if spec.get("type") not in ("request", "response"):
            continue
        name = spec["name"]
        seen.add(name)
        schema = by_name.get(name)
        assert schema is not None, f"{path.name} has no generated class"
        assert schema.api_key == spec["apiKey"]
        assert schema.kind == spec["type"]
        table = REQUESTS if spec["type"] == "request" else RESPONSES
        assert SCHEMAS[table[spec["apiKey"]]] is schema
        assert _versions(spec["validVersions"]) == (schema.valid.lo, schema.valid.hi), name
        assert _versions(spec.get("flexibleVersions", "none")) == (schema.flexible.lo, schema.flexible.hi), (
            name
        )
        common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
        _check_fields(name, spec["fields"], schema.struct, common)
    assert seen == set(by_name), f"generated without a spec: {set(by_name) - seen}"


def _check_fields(
    path: str, spec_fields: list[dict[str, Any]], struct: StructSchema, common: dict[str, Any]
) -> None:
    """Field by field, recursively: same names in order, versions, nullability, tags, array-ness and types."""
    assert [f.name.replace("_", "") for f in struct.fields] == [f["name"].lower() for f in spec_fields], path
    for spec_field, ours in zip(spec_fields, struct.fields, strict=True):
        where = f"{path}.{ours.name}"
        assert _versions(spec_field["versions"]) == (ours.versions.lo, ours.versions.hi), where
        assert _versions(spec_field.get("nullableVersions", "none")) == (
            ours.nullable.lo,
            ours.nullable.hi,
        ), where
        tag = spec_field.get("tag")
        assert (None if tag is None else int(tag)) == ours.tag, where
        if tag is not None:
            assert _versions(spec_field["taggedVersions"]) == (ours.tagged.lo, ours.tagged.hi), where
        type_ = spec_field["type"]
        assert type_.startswith("[]") == ours.array, where
        base = type_.removeprefix("[]")
        if ours.type == "struct":
            assert ours.struct is not None, where
            assert ours.struct.cls.__name__ == base, where
            _check_fields(where, spec_field.get("fields") or common[base], ours.struct, common)
        else:
            assert ours.type == base, where


def _versions(text: str) -> tuple[int, int]:
    if text == "none":
        return (1, 0)
    if text.endswith("+"):
        return (int(text[:-1]), 0x7FFF)
    lo, _, hi = text.partition("-")
    return (int(lo), int(hi or lo))
