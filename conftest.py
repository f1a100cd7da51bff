"""How the suite shares the machine's cores: scripts/test runs pytest with pytest-xdist (`-n 2`).

Most of the suite waits on other processes (JVMs starting, brokers electing leaders, clients timing out): in one
process it kept CI's two cores about a third busy, with two workers two thirds. Three workers kept them busier but
loaded them enough (load average 13, three Spark JVMs) that client timeouts began to fire, so two it is.
Each module is one scheduling scope (pytest_xdist_make_scheduler below), so a module runs whole on one worker and
its module-scoped fixtures and ordering hold as they do without xdist; the fault suite, whose scenarios share
network namespace names and addresses (tests/faults/), is one scope across its files. Session-scoped fixtures
(Apache Kafka, the 3-node kbroker cluster, Spark) start once per worker that needs them.

The slowest groups are queued first, so that the last minutes are not one long module running alone; the order
below comes from a CI run's durations (junit), slowest first. Any other module follows in collection order.
"""

from __future__ import annotations

from typing import Any

import pytest

SLOWEST_FIRST = [
    "compat/test_spark.py",
    "compat/test_roundtrip.py",
    "compat/test_pipeline.py",
    "compat/test_transactions.py",
    "tests/faults",
    "compat/test_cluster_admin.py",
    "compat/test_admin_apis.py",
    "compat/test_transactions_failover.py",
    "tests/test_cluster_faults.py",
    "compat/test_tools_configs_offsets.py",
    "compat/test_tools_groups.py",
    "tests/test_replication_cluster.py",
    "compat/test_errors.py",
    "compat/test_groups.py",
    "compat/test_tools_security.py",
    "compat/test_kafka_cluster.py",
    "tests/test_replication_faults.py",
]


def _group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return "tests/faults" if path.startswith("tests/faults/") else path


def _rank(group: str) -> int:
    return SLOWEST_FIRST.index(group) if group in SLOWEST_FIRST else len(SLOWEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A stable sort: the items of a group stay together and in their own order (the workers send the controller
    # their items in this order, and it queues the groups in it).
    items.sort(key=lambda item: _rank(_group(item.nodeid)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling (a scope's tests all go to one worker, scopes queued in collection order) with our
    groups as the scopes. (Not `--dist loadgroup` with xdist_group marks: under pytest 9 the nodeid suffix that
    carries the mark's group to the controller is lost, and every test is scheduled on its own.)"""
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]  # (xdist ships no types)

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return GroupScheduling(config, log)
