"""Response diffs: every request of compat/response_diff/table.py sent with our own codec to a kbroker and to Apache
Kafka (each release of --kafka, one at a time) at every version both advertise, and the decoded answers compared
field by field, masked only as compat/response_diff/compare.py's MASKS say.

Both brokers are first brought into the same state by the same requests (compat/response_diff/world.py). A row
fails on any difference it does not name as known (compat/response_diff/known.py, each documented in
docs/kafka-differences.md as `diff:ID`), and on a known difference it names that no longer shows. The report gives
the API, the version, the request, and each field's path with both values.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from compat.kafka import major
from compat.kafka.process import KafkaProcess
from compat.response_diff.compare import ABSENT, Difference, differences
from compat.response_diff.known import KNOWN
from compat.response_diff.peer import Peer
from compat.response_diff.run import report, run_row
from compat.response_diff.table import TABLE, Row
from compat.response_diff.world import Setup
from protocol.messages import SCHEMAS
from protocol.messages.describe_cluster_request import DescribeClusterRequest
from protocol.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.describe_groups_response import DescribedGroup, DescribeGroupsResponse
from tests.broker_process import BrokerProcess
from tests.conftest import register_broker

pytestmark = pytest.mark.timeout(300)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "kafka-differences.md"
# Static broker settings both brokers get, so that DescribeConfigs shows settings given at start-up next to defaults
# (as their values, sources and synonyms); the values are the defaults' own, so nothing else changes.
SHARED_OVERRIDES = {"log.retention.ms": "604800000", "log.segment.bytes": "1073741824"}
# The kbroker's settings where its defaults are not those of the Kafka it is compared with: Kafka's node id
# (compat/kafka/process.py runs node 1) and the settings compat/kafka/ gives Kafka.
KBROKER_OVERRIDES = {
    **SHARED_OVERRIDES,
    "node.id": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "release" in metafunc.fixturenames:
        option = metafunc.config.getoption("--kafka")
        releases = [] if option == "none" else [v.strip() for v in option.split(",") if v.strip()]
        metafunc.parametrize("release", releases, scope="module")


@dataclass
class Pair:
    release: str
    kbroker: Peer
    kafka: Peer
    kbroker_process: BrokerProcess
    kafka_process: KafkaProcess


@pytest.fixture(scope="module")
def pair(
    release: str, request: pytest.FixtureRequest, kafka_release: Callable[[str], Path]
) -> Iterator[Pair]:
    """A kbroker and Apache Kafka `release`, both in the world's state; pytest keeps one pair at a time (the
    parameter is module-scoped) and stops both by pid after the last row. Their directory (data and logs of both)
    is kept if a row failed."""
    if request.config.getoption("--bootstrap"):
        pytest.skip("the response diffs start their own kbroker and Kafka; --bootstrap names one broker only")
    failed_before = request.session.testsfailed
    base = Path(tempfile.mkdtemp(prefix="kbroker-response-diff-"))
    kbroker_process = BrokerProcess(base / "data", overrides=KBROKER_OVERRIDES, log_path=base / "kbroker.log")
    kafka_process: KafkaProcess | None = None
    setups: list[Setup] = []
    try:
        kbroker_process.start()
        kafka_release(release)
        kafka_process = KafkaProcess(release, base / f"kafka-{release}", overrides=SHARED_OVERRIDES).start()
        kbroker = Peer("kbroker", kbroker_process.bootstrap)
        kafka = Peer(f"kafka-{release}", kafka_process.bootstrap)
        for peer in (kbroker, kafka):
            setups.append(Setup(peer))
            setups[-1].run()
        yield Pair(release, kbroker, kafka, kbroker_process, kafka_process)
    finally:
        for setup in setups:
            setup.close()
            setup.peer.close()
        kbroker_process.stop()
        if kafka_process is not None:
            kafka_process.stop()
        if request.session.testsfailed == failed_before:
            shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("row", TABLE, ids=[r.id for r in TABLE])
def test_answers_as_kafka(row: Row, pair: Pair, request: pytest.FixtureRequest) -> None:
    for process in (pair.kbroker_process, pair.kafka_process):
        if not process.is_running():
            register_broker(request, process)
            pytest.fail(f"{process.bootstrap} is not running (an earlier row stopped it)")
    result = run_row(row, pair.kbroker, pair.kafka, major(pair.release))
    assert result.versions, f"{row.id}: no version of {result.api} both brokers advertise"
    if result.failed:
        pytest.fail(report(row, result, pair.kafka.name), pytrace=False)


def documented_ids() -> set[str]:
    return set(re.findall(r"`diff:([a-z0-9-]+)`", DOCS.read_text()))


def test_known_differences_are_documented_and_used() -> None:
    """Every known id is in docs/kafka-differences.md as `diff:ID` and named by a row; every `diff:ID` there is
    known; every id a row names exists."""
    named = {known_id for row in TABLE for known_id in row.known}
    assert named - KNOWN.keys() == set(), "rows name ids known.py lacks"
    assert KNOWN.keys() - named == set(), "known.py has ids no row names: drop them"
    assert KNOWN.keys() - documented_ids() == set(), f"ids missing from {DOCS.name} (as `diff:ID`)"
    assert documented_ids() - KNOWN.keys() == set(), f"`diff:ID`s in {DOCS.name} that known.py lacks"


def test_row_ids_are_unique() -> None:
    ids = [row.id for row in TABLE]
    assert len(ids) == len(set(ids))


# ---- the comparer itself (no broker) ------------------------------------------------------------------------------


class CannedPeer:
    """Answers every request with one response: for checking the comparer, not a broker."""

    def __init__(self, response: Any, port: int = 9092) -> None:
        self.response = response
        self.port = port
        self.cluster_id: str | None = "cluster"
        self.stand_ins: dict[object, str] = {}
        self.versions = {SCHEMAS[DescribeClusterRequest].api_key: (0, 1)}

    def call(self, _request: Any, _version: int) -> Any:
        return self.response

    def knows_ids(self, _ids: set[uuid.UUID]) -> bool:
        return True


def cluster(port: int, controller: int = 1, authorized: int = -(2**31)) -> DescribeClusterResponse:
    return DescribeClusterResponse(
        cluster_id="cluster",
        controller_id=controller,
        brokers=[DescribeClusterBroker(broker_id=1, host="127.0.0.1", port=port)],
        cluster_authorized_operations=authorized,
    )


def run_canned(row: Row, kbroker: Any, kafka: Any) -> Any:
    return run_row(row, cast(Peer, kbroker), cast(Peer, kafka), 3)


def test_a_difference_names_its_field_and_both_values_and_masks_only_own_values() -> None:
    kbroker, kafka = CannedPeer(cluster(9092, controller=2), 9092), CannedPeer(cluster(9093), 9093)
    result = run_canned(Row("r", lambda _v, _p: DescribeClusterRequest()), kbroker, kafka)
    assert result.failed
    assert result.exchanges[0].unexplained == [Difference("controller_id", 2, 1)]
    # Each broker's own port is masked; another port is not.
    kafka.response = cluster(9092, controller=2)
    result = run_canned(Row("r", lambda _v, _p: DescribeClusterRequest()), kbroker, kafka)
    assert result.exchanges[0].unexplained == [Difference("brokers[1].port", "<this broker's port>", 9092)]


def _group(operations: int) -> CannedPeer:
    peer = CannedPeer(
        DescribeGroupsResponse(
            groups=[DescribedGroup(group_id="g", group_state="Stable", authorized_operations=operations)]
        )
    )
    peer.versions = {SCHEMAS[DescribeGroupsRequest].api_key: (3, 5)}
    return peer


def test_a_known_difference_passes_and_fails_once_it_no_longer_shows() -> None:
    row = Row("r", lambda _v, _p: DescribeGroupsRequest(groups=["g"]), known=("group-config-operations",))
    kbroker = _group(328)
    shows = run_row(row, cast(Peer, kbroker), cast(Peer, _group(3400)), 4)
    assert not shows.failed
    assert shows.exchanges[0].explained
    gone = run_row(row, cast(Peer, kbroker), cast(Peer, _group(328)), 4)
    assert gone.failed
    assert gone.stale == ["group-config-operations"]
    assert "no longer shows" in report(row, gone, "kafka")


def test_list_items_are_matched_by_their_name() -> None:
    a = {"topics": [{"name": "x", "error": 0}, {"name": "y", "error": 0}]}
    b = {"topics": [{"name": "y", "error": 3}, {"name": "z", "error": 0}]}
    assert differences(a, b) == [
        Difference("topics[x]", {"name": "x", "error": 0}, ABSENT),
        Difference("topics[y].error", 0, 3),
        Difference("topics[z]", ABSENT, {"name": "z", "error": 0}),
    ]
