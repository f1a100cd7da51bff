"""LogConfig parsing and the LogManager's partition directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kbroker.log.files
from kbroker.common import ConfigError, TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.files import SYNCFS_COMMITS_DIRECTORIES, file_system_type
from kbroker.log.log_manager import LogManager, parse_partition_dir_name
from protocol.records import Record, build_batch

pytestmark = pytest.mark.timeout(60)


def test_defaults_are_kafkas() -> None:
    config = LogConfig()
    assert config.segment_bytes == 1 << 30
    assert config.segment_ms == config.retention_ms == 7 * 24 * 3600 * 1000
    assert config.retention_bytes == -1
    assert config.index_interval_bytes == 4096
    assert config.max_message_bytes == 1048588
    assert config.delete_enabled
    assert not config.compact_enabled
    assert not config.log_append_time


def test_from_properties_overrides_defaults() -> None:
    base = LogConfig.from_properties({"segment.bytes": "1000", "retention.ms": "-1"})
    config = LogConfig.from_properties(
        {
            "retention.ms": "60000",
            "cleanup.policy": "compact, delete",
            "message.timestamp.type": "LogAppendTime",
            "min.cleanable.dirty.ratio": "0.1",
            "retention.bytes": "-5",
            "unclean.leader.election.enable": "TRUE",
            "compression.type": "zstd",  # known to Kafka, not modelled here: ignored
        },
        base,
    )
    assert config.segment_bytes == 1000
    assert config.retention_ms == 60000
    assert config.cleanup_policy == {"compact", "delete"}
    assert config.log_append_time
    assert config.min_cleanable_dirty_ratio == 0.1
    assert config.retention_bytes == -5
    assert config.unclean_leader_election_enable
    # string defaults, as the broker's log.* settings give them
    assert LogConfig.from_properties({}, {"segment.bytes": "2048"}).segment_bytes == 2048
    assert LogConfig.from_properties(config.to_properties()) == config


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("segment.bytes", "13"),
        ("segment.bytes", "lots"),
        ("segment.ms", "0"),
        ("retention.ms", "-2"),
        ("index.interval.bytes", "-1"),
        ("message.timestamp.type", "WallClock"),
        ("cleanup.policy", "archive"),
        ("cleanup.policy", ""),
        ("min.cleanable.dirty.ratio", "1.5"),
        ("max.message.bytes", "1e6"),
        ("min.insync.replicas", "0"),
        ("unclean.leader.election.enable", "yes"),
    ],
)
def test_bad_values_raise_config_error_naming_the_config(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name.replace(".", r"\.")):
        LogConfig.from_properties({name: value})


def test_partition_dir_names() -> None:
    assert parse_partition_dir_name("my-topic-12") == TopicPartition("my-topic", 12)
    assert parse_partition_dir_name("t-0") == TopicPartition("t", 0)
    assert parse_partition_dir_name("meta.properties") is None
    assert parse_partition_dir_name("-3") is None
    assert parse_partition_dir_name("topic-x") is None


def test_create_get_reopen_delete(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, LogConfig(), now_ms=0)
    log = manager.create(TopicPartition("orders-v2", 3), LogConfig(segment_bytes=4096), now_ms=0)
    assert manager.create(TopicPartition("orders-v2", 3), LogConfig(), now_ms=0) is log
    assert manager.get(TopicPartition("orders-v2", 3)) is log
    assert log.topic_partition == TopicPartition("orders-v2", 3)
    assert manager.get(TopicPartition("orders-v2", 4)) is None
    manager.create(TopicPartition("other", 0), LogConfig(), now_ms=0)
    log.append_as_leader(build_batch([Record(0, 0, b"k", b"v")]), 0, 0)
    (tmp_path / "meta.properties").write_text("cluster.id=x\n")
    (tmp_path / "not-a-partition").mkdir()
    manager.close_all()

    manager = LogManager(
        tmp_path, LogConfig(), topic_configs={"orders-v2": LogConfig(segment_bytes=4096)}, now_ms=0
    )
    assert manager.partitions() == [TopicPartition("orders-v2", 3), TopicPartition("other", 0)]
    reopened = manager.get(TopicPartition("orders-v2", 3))
    assert reopened is not None
    assert reopened.log_end_offset == 1
    assert reopened.config.segment_bytes == 4096
    assert reopened.configured
    # A topic whose configs were not given: recovered with the defaults, but left alone by retention and the
    # cleaner until its owner configures it.
    other = manager.get(TopicPartition("other", 0))
    assert other is not None
    assert not other.configured

    assert manager.delete(TopicPartition("orders-v2", 3))
    assert not manager.delete(TopicPartition("orders-v2", 3))
    assert manager.get(TopicPartition("orders-v2", 3)) is None
    assert not (tmp_path / "orders-v2-3").exists()
    assert not any(p.name.endswith("-delete") for p in tmp_path.iterdir())
    manager.close_all()


def test_a_start_makes_every_directory_durable_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a cleanly closed log removes its active segment's index files, which must be durable before the
    first append. The log manager makes that so for every partition together once all are open: on a file system
    whose syncfs commits directory changes (ext4, xfs, btrfs) one syncfs and no directory fsync, elsewhere an fsync
    of each partition's directory. (That the removals survive a power cut: tests/faults/test_fault_power.py.)"""
    manager = LogManager(tmp_path, LogConfig(), now_ms=0)
    for partition in range(20):
        log = manager.create(TopicPartition("t", partition), LogConfig(), now_ms=0)
        log.append_as_leader(build_batch([Record(0, 0, b"k", b"v")]), 0, 0)
    manager.close_all()

    directory_fsyncs: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            directory_fsyncs.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    syncfs_calls: list[int] = []
    real_syncfs = kbroker.log.files._syncfs

    def syncfs(fd: int) -> int:
        syncfs_calls.append(fd)
        assert real_syncfs is not None
        return int(real_syncfs(fd))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(kbroker.log.files, "_syncfs", syncfs)
    manager = LogManager(tmp_path, LogConfig(), now_ms=0)
    monkeypatch.undo()
    assert len(manager) == 20
    assert not any((tmp_path / f"t-{p}" / "00000000000000000000.index").exists() for p in range(20))
    if file_system_type(tmp_path) in SYNCFS_COMMITS_DIRECTORIES:
        assert (len(syncfs_calls), directory_fsyncs) == (1, [])
    else:
        assert not syncfs_calls
        assert sorted(directory_fsyncs) == sorted(str(tmp_path / f"t-{p}") for p in range(20))
    manager.close_all()


def test_leftover_deleted_directories_are_removed_at_start(tmp_path: Path) -> None:
    doomed = tmp_path / "t-0.0123abcd-delete"
    doomed.mkdir()
    (doomed / "00000000000000000000.log").write_bytes(b"x")
    manager = LogManager(tmp_path, LogConfig(), now_ms=0)
    assert not doomed.exists()
    assert manager.partitions() == []


def test_retention_pass_covers_every_log(tmp_path: Path) -> None:
    config = LogConfig(segment_bytes=500, retention_ms=1000)
    manager = LogManager(tmp_path, config, now_ms=0)
    for partition in range(3):
        log = manager.create(TopicPartition("t", partition), config, now_ms=0)
        for _ in range(20):
            log.append_as_leader(build_batch([Record(0, 0, b"k", b"v" * 100)]), 0, now_ms=0)
        log.advance_high_watermark(log.log_end_offset)
    deleted = manager.retention_pass(now_ms=10_000)
    assert deleted > 0
    for partition in range(3):
        kept = manager.get(TopicPartition("t", partition))
        assert kept is not None
        assert len(kept.segments) == 1
        assert kept.log_start_offset > 0
    manager.close_all()
