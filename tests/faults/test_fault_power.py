"""Power loss: every node's data directory on a PowerFS (tests/faults/powerfs.py), a FUSE file system that drops
whatever was not fsynced when the power goes, and tears the last unsynced append of each file at a random byte.

A 3-node cluster; an idempotent acks=all producer and a consumer group on one topic, an acks=1 producer on another.
First the leader of the busiest partition loses power (kill -9, then everything unsynced on its disk is dropped, then
it starts again); then the whole cluster loses power at once. Expected:

- acks=all: nothing acknowledged is lost, ever, with any number of nodes losing power at once: a batch is
  acknowledged only once every in-sync replica fsynced it (kbroker.testing.history judges reads and every replica);
- acks=1: a record is acknowledged once the leader wrote it, not fsynced it; followers fsync what they fetch within
  milliseconds. When every replica loses power at once, what no replica had fsynced yet is lost: the records
  acknowledged in the last moments before the cut. The test measures them (count and age) and asserts the bound
  docs/reliability.md states: none older than ACKS_1_BOUND_S.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from kbroker.common import TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.files import SYNCFS_COMMITS_DIRECTORIES, file_system_type
from kbroker.log.log_manager import LogManager
from kbroker.testing.history import check
from protocol.records import Record, build_batch
from tests.broker_process import BrokerProcess
from tests.cluster_fixture import Cluster
from tests.conftest import missing_tool, register_broker
from tests.etcd_process import running_etcd
from tests.faults.powerfs import PowerFS
from tests.faults.workload import GroupReader, Outcome, SingleNode, Writer, dump_dir, judge, read_all
from tests.test_cluster_faults import wait_for_full_isrs

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

TOPIC, ONES, PARTITIONS = "powered", "ones", 3
ACKS_1_BOUND_S = 2.0


@contextmanager
def powered_cluster(
    root: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[Cluster, dict[int, PowerFS]]]:
    reason = PowerFS.unavailable()
    if reason is not None:
        missing_tool(reason)
    with running_etcd() as etcd, ExitStack() as stack:
        disks = {
            i: stack.enter_context(PowerFS(root / f"node{i}", root / f"disk{i}.sock", root / f"disk{i}.log"))
            for i in (1, 2, 3)
        }
        cluster = Cluster(root, etcd, 3, request=request)
        try:
            cluster.start()
            yield cluster, disks
        finally:
            cluster.stop()


def lose_power(cluster: Cluster, disks: dict[int, PowerFS], nodes: list[int], seed: int) -> float:
    """kill -9 the nodes, drop (and tear) what their disks had not made durable, start them again. Returns when the
    power went (once every one of them was dead)."""
    for i in nodes:
        cluster.kill(i)
    cut_at = time.monotonic()
    lost = {i: disks[i].power_cut(torn=True, seed=seed + i) for i in nodes}
    print(f"nodes {nodes} lost power: {lost}")
    for i in nodes:
        cluster.node(i).start()
    return cut_at


@pytest.fixture
def powered(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Cluster, dict[int, PowerFS]]]:
    with powered_cluster(tmp_path, request) as pair:
        yield pair


def test_acks_all_survives_power_loss_of_one_node_and_of_all(
    powered: tuple[Cluster, dict[int, PowerFS]], tmp_path: Path
) -> None:
    cluster, disks = powered
    cluster.create_topic(TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2"})
    cluster.create_topic(ONES, PARTITIONS, 3, {"min.insync.replicas": "1"})
    writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
    ones = Writer(cluster.bootstrap, ONES, PARTITIONS, name="acks1", idempotent=False).start()
    reader = GroupReader(cluster.bootstrap, TOPIC, "power-group").start()
    try:
        time.sleep(3)
        victim = cluster.partition(TOPIC, 0).leader
        cuts = [lose_power(cluster, disks, [victim], seed=1)]
        wait_for_full_isrs(cluster)
        time.sleep(2)
        cuts.append(lose_power(cluster, disks, [1, 2, 3], seed=10))
        wait_for_full_isrs(cluster)
        writer.wait_for_progress()
    finally:
        unflushed = writer.stop()
        ones.stop()
        reader.stop()
    assert unflushed == 0
    assert not writer.failed, writer.failed[:5]

    # acks=1: what the final log lacks was acknowledged just before a power cut (of its leader, or of every node).
    final_ones = {r.value for r in read_all(cluster.bootstrap, ONES, PARTITIONS)}
    lost = [at for value, at in ones.acked_at() if value not in final_ones]
    ages = [min((cut - at for cut in cuts if cut >= at), default=-1.0) for at in lost]
    print(
        f"acks=1: {len(lost)} of {len(ones.acks)} acknowledged records lost to the power cuts"
        + (f", acknowledged {min(ages):.3f} to {max(ages):.3f} s before one" if ages else "")
    )
    assert all(0 <= age < ACKS_1_BOUND_S for age in ages), ages  # -1: acknowledged after the last cut

    outcome = Outcome(writer.acks, reader.reads, reader.commits)
    judge(cluster, TOPIC, PARTITIONS, outcome, tmp_path)


@pytest.mark.long_faults  # ~30 s; the cluster scenario above covers power loss in .ci/run
@pytest.mark.timeout(180)
def test_single_node_power_loss(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A single broker (a cluster of one) on a PowerFS, cut three times under load: acks=all loses nothing (it was
    fsynced before it was acknowledged), a torn tail is cut back at recovery, and acks=1 loses at most what was
    acknowledged within log.flush.interval.ms (1 s) of the cut."""
    reason = PowerFS.unavailable()
    if reason is not None:
        missing_tool(reason)
    with PowerFS(tmp_path / "data", tmp_path / "disk.sock", tmp_path / "disk.log") as disk:
        broker = BrokerProcess(tmp_path / "data", log_path=tmp_path / "broker.log")
        register_broker(request, broker)
        broker.start()
        cluster = SingleNode(broker)
        try:
            cluster.create_topic(TOPIC, PARTITIONS, 1)
            cluster.create_topic(ONES, PARTITIONS, 1)
            writer = Writer(cluster.bootstrap, TOPIC, PARTITIONS).start()
            ones = Writer(cluster.bootstrap, ONES, PARTITIONS, name="acks1", idempotent=False).start()
            cuts = []
            try:
                for seed in range(3):
                    time.sleep(2)
                    broker.kill()
                    cuts.append(time.monotonic())
                    print(f"power cut {seed + 1}: {disk.power_cut(torn=True, seed=seed)}")
                    broker.start()
                time.sleep(2)
            finally:
                unflushed = writer.stop()
                ones.stop()
            assert unflushed == 0
            assert not writer.failed, writer.failed[:5]
            final_ones = {r.value for r in read_all(cluster.bootstrap, ONES, PARTITIONS)}
            lost = [at for value, at in ones.acked_at() if value not in final_ones]
            ages = [min((cut - at for cut in cuts if cut >= at), default=-1.0) for at in lost]
            print(
                f"acks=1: {len(lost)} of {len(ones.acks)} acknowledged records lost to the power cuts"
                + (f", acknowledged {min(ages):.3f} to {max(ages):.3f} s before one" if ages else "")
            )
            assert all(0 <= age < ACKS_1_BOUND_S for age in ages), ages
            read = read_all(cluster.bootstrap, TOPIC, PARTITIONS)
        finally:
            broker.stop()
        disk_log = dump_dir(tmp_path / "data", TOPIC, PARTITIONS, "disk")
        verdict = check(writer.acks, read + disk_log, start_offset=0)
        print(verdict.report(examples=5))
        assert verdict.valid, verdict.report(examples=20)


@pytest.mark.timeout(60)
def test_a_clean_start_removes_the_active_segments_index_files_durably(tmp_path: Path) -> None:
    """A clean close writes the active segment's index files (the next start trusts the segment without a scan);
    that start removes them, since the segment grows again, and must make the removal durable before anything is
    appended: stale index files would make a later recovery trust the segment as it was. The log manager does that
    for every partition at once, after opening them all (kbroker/log/files.py `sync_directories`): one syncfs where
    the file system's covers directories, an fsync of each directory elsewhere, as here (a FUSE mount's syncfs does
    nothing). After a power cut right after the start, every removal has stayed."""
    reason = PowerFS.unavailable()
    if reason is not None:
        missing_tool(reason)
    data = tmp_path / "data"
    with PowerFS(data, tmp_path / "disk.sock", tmp_path / "disk.log") as disk:
        assert file_system_type(data) not in SYNCFS_COMMITS_DIRECTORIES
        manager = LogManager(data, LogConfig(), now_ms=0)
        for partition in range(3):
            log = manager.create(TopicPartition("t", partition), LogConfig(), now_ms=0)
            log.append_as_leader(build_batch([Record(0, 0, b"k", b"v")]), 0, 0)
        manager.close_all()
        index_files = [
            data / f"t-{p}" / f"00000000000000000000.{kind}"
            for p in range(3)
            for kind in ("index", "timeindex")
        ]
        assert all(path.exists() for path in index_files)

        manager = LogManager(data, LogConfig(), now_ms=0)
        assert not any(path.exists() for path in index_files)
        lost = disk.power_cut()
        assert not any(path.exists() for path in index_files), lost
        for log in manager:
            log.close(clean=False)
