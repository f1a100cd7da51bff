"""`kbroker topic …` and `kbroker group …` against a real broker: what a new user types after `scripts/serve`.

Most commands run in process through `kbroker.cli.main` (the same code as the console script, without a Python
start-up each); one test runs the installed entry point to prove `kbroker topic` works from a shell with its
default bootstrap address taken from $KBROKER_BOOTSTRAP.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer

from kbroker.cli import main
from kbroker.tools.formats import compile_format, murmur2, parse_time_ms, partition_for_key
from kbroker.tools.session import Message
from tests.broker_process import BrokerProcess
from tests.test_groups_support import GROUP_OVERRIDES, unique

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent


def kb(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    broker: BrokerProcess,
    *args: str,
    stdin: str = "",
) -> tuple[int, str, str]:
    """Run `kbroker ARGS` in process against `broker`: (status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    monkeypatch.setenv("KBROKER_BOOTSTRAP", broker.bootstrap)
    capsys.readouterr()
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_murmur2_matches_the_java_clients_partitioner() -> None:
    # Kafka's own test vectors for Utils.murmur2 (as signed 32-bit values).
    vectors = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
    }
    for data, expected in vectors.items():
        assert murmur2(data) == expected & 0xFFFFFFFF, data
    assert partition_for_key(b"21", 10) == (-973932308 & 0x7FFFFFFF) % 10


def test_kcat_format_tokens_and_times() -> None:
    message = Message("t", 2, 41, 1700000000000, b"k", b"v\xff", (("h", b"1"), ("n", None)))
    assert compile_format("%t/%p@%o %T %k=%s (%K,%S) [%h]\\n")(message) == (
        "t/2@41 1700000000000 k=v\\xff (1,2) [h=1,n=]\n"
    )
    with pytest.raises(ValueError, match="unknown format token %z"):
        compile_format("%z")
    assert parse_time_ms("1700000000000") == 1700000000000
    assert parse_time_ms("2023-11-14T22:13:20") == 1700000000000
    assert parse_time_ms("2023-11-14T23:13:20+01:00") == 1700000000000


def test_topic_create_list_describe_delete(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, broker: BrokerProcess
) -> None:
    status, out, err = kb(
        capsys, monkeypatch, broker, "topic", "create", "events", "-p", "3", "-c", "retention.ms=86400000"
    )
    assert (status, out) == (0, "created topic events\n"), err
    status, _, err = kb(capsys, monkeypatch, broker, "topic", "create", "events")
    assert status == 1
    assert "TOPIC_ALREADY_EXISTS" in err

    status, out, _ = kb(capsys, monkeypatch, broker, "topic", "list")
    assert status == 0
    assert out.splitlines()[0].split() == ["NAME", "PARTITIONS", "REPLICAS"]
    assert ["events", "3", "1"] in [line.split() for line in out.splitlines()]
    assert "__consumer_offsets" not in out

    status, out, _ = kb(capsys, monkeypatch, broker, "topic", "describe", "events")
    assert status == 0
    lines = [line.split() for line in out.splitlines()]
    assert ["PARTITIONS", "3"] in lines
    assert ["retention.ms", "86400000", "TOPIC"] in lines
    assert [
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
    ] in lines  # partition 0: leader 0, epoch 0, replicas/ISR 0, empty

    status, out, _ = kb(capsys, monkeypatch, broker, "topic", "delete", "events")
    assert (status, out) == (0, "deleted topic events\n")
    status, _, err = kb(capsys, monkeypatch, broker, "topic", "describe", "events")
    assert status == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION" in err


def test_produce_keys_headers_and_consume_formats_offsets_and_times(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, broker: BrokerProcess
) -> None:
    assert kb(capsys, monkeypatch, broker, "topic", "create", "lines", "-p", "4")[0] == 0
    lines = "".join(f"key{i}:value {i}\n" for i in range(20))
    status, _, err = kb(
        capsys,
        monkeypatch,
        broker,
        "topic",
        "produce",
        "lines",
        "-k",
        ":",
        "-H",
        "source=cli",
        "-H",
        "n=1",
        stdin=lines,
    )
    assert status == 0, err
    status, out, err = kb(
        capsys, monkeypatch, broker, "topic", "consume", "lines", "-e", "-f", "%p|%o|%k|%s|%h\\n"
    )
    assert status == 0, err
    records = [line.split("|") for line in out.splitlines()]
    assert len(records) == 20
    for partition, _, key, value, headers in records:
        # Where the Java client would have put the key, and the value without the key and separator.
        assert int(partition) == partition_for_key(key.encode(), 4)
        assert value == f"value {key.removeprefix('key')}"
        assert headers == "source=cli,n=1"

    # One partition, unkeyed: then offsets from the start, N before the end, by time, and -n.
    stamp_before = int(time.time() * 1000) - 1
    status, _, err = kb(
        capsys, monkeypatch, broker, "topic", "produce", "lines", "-p", "2", stdin="a\nb\nc\n"
    )
    assert status == 0, err
    _, out, _ = kb(capsys, monkeypatch, broker, "topic", "consume", "lines", "-p", "2", "-e", "-o", "-2")
    assert out.splitlines() == ["b", "c"]
    _, out, _ = kb(
        capsys, monkeypatch, broker, "topic", "consume", "lines", "-p", "2", "-e", "-o", f"@{stamp_before}"
    )
    assert out.splitlines() == ["a", "b", "c"]
    _, out, _ = kb(capsys, monkeypatch, broker, "topic", "consume", "lines", "-p", "2", "-e", "-o", "end")
    assert out == ""

    status, _, err = kb(capsys, monkeypatch, broker, "topic", "consume", "lines", "-f", "%q")
    assert status == 1
    assert "unknown format token %q" in err


def test_consume_with_a_group_resumes_where_it_stopped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, broker: BrokerProcess
) -> None:
    assert kb(capsys, monkeypatch, broker, "topic", "create", "work", "-p", "1")[0] == 0
    kb(capsys, monkeypatch, broker, "topic", "produce", "work", stdin="".join(f"r{i}\n" for i in range(5)))
    _, out, _ = kb(capsys, monkeypatch, broker, "topic", "consume", "work", "-g", "team", "-n", "2")
    assert out.splitlines() == ["r0", "r1"]
    _, out, _ = kb(capsys, monkeypatch, broker, "topic", "consume", "work", "-g", "team", "-e")
    assert out.splitlines() == ["r2", "r3", "r4"]

    status, out, _ = kb(capsys, monkeypatch, broker, "group", "list")
    assert status == 0
    assert ["team", "Empty", "-", "0"] in [line.split() for line in out.splitlines()]
    status, out, _ = kb(capsys, monkeypatch, broker, "group", "describe", "team")
    assert status == 0
    lines = [line.split() for line in out.splitlines()]
    assert ["TOTAL-LAG", "0"] in lines
    assert ["work", "0", "5", "5", "0", "-", "-", "-"] in lines

    status, out, _ = kb(capsys, monkeypatch, broker, "group", "seek", "team", "--to", "1")
    assert status == 0
    assert ["work", "0", "1"] in [line.split() for line in out.splitlines()]
    _, out, _ = kb(capsys, monkeypatch, broker, "group", "describe", "team")
    assert ["TOTAL-LAG", "4"] in [line.split() for line in out.splitlines()]
    _, out, _ = kb(capsys, monkeypatch, broker, "topic", "consume", "work", "-g", "team", "-n", "1")
    assert out.splitlines() == ["r1"]


def test_group_describe_shows_members_and_seek_refuses_an_active_group(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    broker_factory: object,
) -> None:
    assert callable(broker_factory)
    broker: BrokerProcess = broker_factory(overrides=GROUP_OVERRIDES)
    topic, group = unique("members"), unique("g")
    assert kb(capsys, monkeypatch, broker, "topic", "create", topic, "-p", "2")[0] == 0
    kb(capsys, monkeypatch, broker, "topic", "produce", topic, "-p", "1", stdin="x\ny\n")
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap,
        "group.id": group,
        "client.id": "cli-test-member",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })  # fmt: skip
    try:
        consumer.subscribe([topic])
        seen = 0
        deadline = time.monotonic() + 60
        while seen < 2 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen += 1
        assert seen == 2
        consumer.commit(asynchronous=False)
        status, out, err = kb(capsys, monkeypatch, broker, "group", "describe", group)
        assert status == 0, err
        lines = [line.split() for line in out.splitlines()]
        assert ["STATE", "Stable"] in lines
        assert ["MEMBERS", "1"] in lines
        rows = {(r[0], r[1]): r for r in lines if r and r[0] == topic}
        assert rows[(topic, "1")][2:5] == ["2", "2", "0"]
        assert rows[(topic, "1")][6] == "cli-test-member"
        assert rows[(topic, "0")][2] == "-"  # assigned, nothing committed

        status, _, err = kb(capsys, monkeypatch, broker, "group", "seek", group, "--to", "start")
        assert status == 1
        assert "1 active members" in err
    finally:
        consumer.close()


def test_the_console_script_defaults_to_kbroker_bootstrap(tmp_path: Path, broker: BrokerProcess) -> None:
    env = {**os.environ, "KBROKER_BOOTSTRAP": broker.bootstrap}
    kbroker = Path(sys.executable).with_name("kbroker")
    command = [str(kbroker)] if kbroker.exists() else [sys.executable, "-m", "kbroker"]
    created = subprocess.run(
        [*command, "topic", "create", "shell"], env=env, capture_output=True, text=True, timeout=60
    )
    assert created.returncode == 0, created.stderr
    produced = subprocess.run(
        [*command, "topic", "produce", "shell"],
        input="hello\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run(
        [*command, "topic", "consume", "shell", "-n", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert consumed.stdout == "hello\n", consumed.stderr
    # Nothing listens on the default address's port here: the error says where it tried.
    refused = subprocess.run(
        [*command, "topic", "list", "-b", "127.0.0.1:1"], env=env, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 1
    assert "127.0.0.1:1" in refused.stderr
    assert "Traceback" not in refused.stderr
