"""The import contract: `protocol/` is sans-IO and knows nothing of the broker or of trio."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("kbroker", "trio", "socket", "asyncio")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "path", sorted((ROOT / "protocol").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_protocol_is_sans_io(path: Path) -> None:
    bad = _imports(path) & set(FORBIDDEN)
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.timeout(30)
def test_broker_never_reads_the_shared_specs_at_run_time() -> None:
    for path in list((ROOT / "kbroker").rglob("*.py")) + list((ROOT / "protocol").rglob("*.py")):
        assert "kafka-message-specs" not in path.read_text(), f"{path} refers to ../shared at run time"
