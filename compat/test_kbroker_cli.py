"""`kbroker topic` and `kbroker group` against each target: our own client speaks to Apache Kafka as to kbroker.

The commands run in process (kbroker.cli.main) with the target as bootstrap server; the same assertions hold for
every target: what was produced is consumed back with its keys, headers and partitions, describe shows the topic's
config, a group's committed position, lag and seek behave alike.
"""

from __future__ import annotations

import io
import sys

import pytest

from compat.target import Target
from kbroker.cli import main
from kbroker.tools.formats import partition_for_key

pytestmark = pytest.mark.timeout(300)


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    target: Target,
    *args: str,
    stdin: str = "",
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    status = main([*args[:2], "-b", target.bootstrap, *args[2:]])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_topic_and_group_commands(
    target: Target, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic, group = target.topic("cli"), target.topic("cli-group")
    status, _, err = run(
        capsys, monkeypatch, target, "topic", "create", topic, "-p", "3", "-c", "retention.ms=3600000"
    )
    assert status == 0, err
    target.wait_topic_ready(topic, 3)

    lines = "".join(f"k{i}:v{i}\n" for i in range(12))
    status, _, err = run(
        capsys, monkeypatch, target, "topic", "produce", topic, "-k", ":", "-H", "h=1", stdin=lines
    )
    assert status == 0, err
    status, out, err = run(
        capsys, monkeypatch, target, "topic", "consume", topic, "-e", "-f", "%p %k %s %h\\n"
    )
    assert status == 0, err
    got = sorted(line.split() for line in out.splitlines())
    assert got == sorted(
        [str(partition_for_key(f"k{i}".encode(), 3)), f"k{i}", f"v{i}", "h=1"] for i in range(12)
    )

    status, out, err = run(capsys, monkeypatch, target, "topic", "describe", topic)
    assert status == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert ["retention.ms", "3600000", "TOPIC"] in rows
    assert sum(int(r[6]) for r in rows if len(r) == 7 and r[0].isdigit()) == 12  # high watermarks add up

    status, out, err = run(
        capsys, monkeypatch, target, "topic", "consume", topic, "-g", group, "-n", "5", "-p", "0", "-e"
    )
    assert status == 0, err
    read = len(out.splitlines())
    status, out, err = run(capsys, monkeypatch, target, "group", "describe", group)
    assert status == 0, err
    rows = [line.split() for line in out.splitlines()]
    on_zero = [r for r in rows if r[:2] == [topic, "0"]]
    assert on_zero[0][2] == str(read)
    assert ["STATE", "Empty"] in rows

    status, out, err = run(capsys, monkeypatch, target, "group", "seek", group, "--to", "start")
    assert status == 0, err
    assert [topic, "0", "0"] in [line.split() for line in out.splitlines()]
    status, out, _ = run(capsys, monkeypatch, target, "group", "list")
    assert group in out.split()

    status, _, err = run(capsys, monkeypatch, target, "topic", "delete", topic)
    assert status == 0, err
