"""bench/floor_broker.py, the floor bench/python_floor.py sets kbroker against, does the work it is credited with:
every record a stock client produces is in its partition's file, in batches whose CRC holds, at the offsets the
answers gave. A floor that skipped a write would flatter the comparison."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer

from bench.run import stop_pid
from protocol.records import decode_records, iter_batches
from tests.broker_process import free_port

REPO = Path(__file__).resolve().parent.parent
RECORDS = 2_000


@pytest.fixture(params=["trio", "threads"])
def floor_broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """(bootstrap, data directory, mode)"""
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [
            *(sys.executable, str(REPO / "bench" / "floor_broker.py"), "--data-dir", str(data)),
            *("--port", str(free_port()), "--mode", request.param),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("BOOTSTRAP "), line
        yield line.split()[1], data, request.param
    finally:
        stop_pid(proc)


@pytest.mark.timeout(60)
def test_every_produced_record_is_written_at_its_acknowledged_offset(
    floor_broker: tuple[str, Path, str],
) -> None:
    bootstrap, data, _ = floor_broker
    acknowledged: dict[bytes, tuple[int, int]] = {}
    errors: list[KafkaError] = []

    def delivered(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            acknowledged[msg.value()] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]

    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5})
    for i in range(RECORDS):
        producer.produce("floor", f"record {i}".encode(), partition=i % 4, on_delivery=delivered)
    assert producer.flush(30) == 0
    assert errors == []
    assert len(acknowledged) == RECORDS

    written: dict[bytes, tuple[int, int]] = {}
    for partition in range(4):
        buf = (data / f"floor-{partition}" / "00000000000000000000.log").read_bytes()
        expected_offset, consumed = 0, 0
        for batch in iter_batches(buf):
            assert (
                batch.verify_crc()
            )  # the CRC covers what follows it, so the base offset set in place keeps it
            assert batch.base_offset == expected_offset
            for record in decode_records(batch):
                assert record.value is not None
                written[record.value] = (partition, record.offset)
            expected_offset = batch.base_offset + batch.last_offset_delta + 1
            consumed += batch.size
        assert consumed == len(buf)  # nothing but whole batches
    assert written == acknowledged


@pytest.mark.timeout(60)
def test_acks_all_is_fsynced_on_trio_and_refused_on_threads(floor_broker: tuple[str, Path, str]) -> None:
    """The trio floor answers acks=all once it has fsynced the request's files (which only a power cut would show;
    tests/faults cuts kbroker's); the threads floor has no fsync to wait for, so it says so (INVALID_REQUIRED_ACKS)
    instead of acknowledging as if it had."""
    bootstrap, data, mode = floor_broker
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": False})
    producer.produce("floor", b"x", partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0
    assert len(errors) == 1
    log = data / "floor-0" / "00000000000000000000.log"
    if mode == "threads":
        assert errors[0] is not None
        assert errors[0].code() == KafkaError.INVALID_REQUIRED_ACKS
        assert not log.exists()
    else:
        assert errors[0] is None
        assert [r.value for b in iter_batches(log.read_bytes()) for r in decode_records(b)] == [b"x"]


@pytest.mark.timeout(60)
def test_a_malformed_request_closes_its_connection_only(floor_broker: tuple[str, Path, str]) -> None:
    bootstrap, data, _ = floor_broker
    host, port = bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as bad:
        # a Produce v9 header whose body stops after the transactional id
        bad.sendall(struct.pack(">ihhihB", 12, 0, 9, 7, -1, 0) + b"\x00")
        assert bad.recv(1) == b""  # closed by the broker, no answer
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1})
    producer.produce("floor", b"after", partition=1)
    assert producer.flush(30) == 0
    assert (data / "floor-1" / "00000000000000000000.log").stat().st_size > 0
