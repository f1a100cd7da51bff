"""The import contracts, checked on the source: who may import whom.

- `protocol/` is sans-IO: it knows nothing of the broker, of trio or of sockets.
- `kbroker/` has no import cycle, counting every import (a lazy import inside a function still ties two modules).
- Request handlers depend on service interfaces only: never on the composition root, the server, the connection or
  the dispatcher.
- The storage layer (`kbroker/log/`) knows nothing of replication, metadata, the coordinator or the handlers.
- `kbroker/spark/` (the Spark source and sink, an optional extra) and the broker do not import each other: the
  broker must run without Spark installed, and the connector is a Kafka client like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("kbroker", "trio", "socket", "asyncio")
KBROKER_MODULES = {
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
    for path in sorted((ROOT / "kbroker").rglob("*.py"))
}


def _imports(path: Path) -> set[str]:
    """Top-level package names `path` imports."""
    return {name.split(".")[0] for name in _imported_modules(path)}


def _imported_modules(path: Path) -> set[str]:
    """Every module `path` imports anywhere in it (absolute names; `from a import b` counts a.b when that is a
    module, else a)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                names.add(sub if sub in KBROKER_MODULES else node.module)
    return names


def _kbroker_graph() -> dict[str, set[str]]:
    return {
        module: {name for name in _imported_modules(path) if name in KBROKER_MODULES and name != module}
        for module, path in KBROKER_MODULES.items()
    }


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a path that starts and ends at the same module, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


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


@pytest.mark.timeout(30)
def test_kbroker_has_no_import_cycle() -> None:
    cycle = _find_cycle(_kbroker_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.timeout(30)
def test_the_cycle_finder_finds_cycles() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


EDGE = {"kbroker.app", "kbroker.server", "kbroker.connection", "kbroker.dispatch", "kbroker.cli"}


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "module", sorted(m for m in KBROKER_MODULES if m.startswith("kbroker.handlers.")), ids=lambda m: m
)
def test_handlers_depend_on_service_interfaces_only(module: str) -> None:
    """Not on the composition root, the server, the connection or the dispatcher (what they reach of the broker
    is kbroker/handlers/services.py)."""
    bad = {name for name in _kbroker_graph()[module] if name in EDGE}
    assert not bad, f"{module} imports {sorted(bad)}"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "module", sorted(m for m in KBROKER_MODULES if m.startswith("kbroker.log.")), ids=lambda m: m
)
def test_storage_knows_nothing_above_it(module: str) -> None:
    above = (
        "kbroker.replication",
        "kbroker.metadata",
        "kbroker.cluster",
        "kbroker.coordinator",
        "kbroker.handlers",
    )
    bad = {name for name in _kbroker_graph()[module] if name.startswith(above) or name in EDGE}
    assert not bad, f"{module} imports {sorted(bad)}"


@pytest.mark.timeout(30)
def test_the_broker_and_the_spark_connector_stay_apart() -> None:
    graph = _kbroker_graph()
    for module, path in KBROKER_MODULES.items():
        if module.startswith("kbroker.spark"):
            bad = {name for name in graph[module] if not name.startswith("kbroker.spark")}
            assert not bad, f"{module} imports the broker's {sorted(bad)}"
        else:
            bad = {name for name in _imported_modules(path) if name.startswith(("pyspark", "kbroker.spark"))}
            assert not bad, f"{module} imports {sorted(bad)}"
