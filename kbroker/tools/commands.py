"""`kbroker topic …` and `kbroker group …`: try a broker without another tool, as `rpk topic` / `rpk group` do.

    kbroker topic create events -p 3 -c retention.ms=86400000
    kbroker topic list
    kbroker topic describe events
    echo "k1:hello" | kbroker topic produce events -k :
    kbroker topic consume events -o start -e -f '%p %o %k=%s\\n'
    kbroker topic consume events -g my-group -n 10
    kbroker group list
    kbroker group describe my-group
    kbroker group seek my-group --to start
    kbroker topic delete events

Every command talks Kafka's protocol through our own codec (kbroker/tools/session.py) to `--bootstrap-server`
(default 127.0.0.1:9092, or $KBROKER_BOOTSTRAP), and works against Apache Kafka too.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from kbroker.tools.formats import (
    DEFAULT_FORMAT,
    FORMAT_HELP,
    compile_format,
    parse_header,
    parse_time_ms,
    partition_for_key,
)
from kbroker.tools.session import EARLIEST, LATEST, KafkaSession, PartitionLag, ToolError

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
BATCH_RECORDS = 500
SOURCES = {1: "TOPIC", 4: "STATIC_BROKER", 5: "DEFAULT"}


def _bootstrap_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server",
        "-b",
        "--brokers",
        dest="bootstrap",
        default=os.environ.get("KBROKER_BOOTSTRAP", DEFAULT_BOOTSTRAP),
        help="HOST:PORT[,HOST:PORT…] [default $KBROKER_BOOTSTRAP or 127.0.0.1:9092]",
    )


def build_topic_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    create = sub.add_parser("create", help="create topics")
    create.add_argument("topics", nargs="+", metavar="TOPIC")
    create.add_argument(
        "-p", "--partitions", type=int, default=-1, help="[default: the broker's num.partitions]"
    )
    create.add_argument(
        "-r", "--replicas", type=int, default=-1, help="[default: the broker's default.replication.factor]"
    )
    create.add_argument(
        "-c", "--config", action="append", default=[], metavar="KEY=VALUE", help="topic config"
    )
    lister = sub.add_parser("list", help="list topics with their partition and replica counts")
    lister.add_argument("-i", "--internal", action="store_true", help="include internal topics")
    describe = sub.add_parser("describe", help="partitions, leaders, ISR, offsets and configs of topics")
    describe.add_argument("topics", nargs="+", metavar="TOPIC")
    delete = sub.add_parser("delete", help="delete topics")
    delete.add_argument("topics", nargs="+", metavar="TOPIC")
    produce = sub.add_parser("produce", help="write each line of stdin as a record")
    produce.add_argument("topic")
    produce.add_argument(
        "-k", "--key-separator", help="split each line into KEY, SEP, VALUE at the first SEP"
    )
    produce.add_argument(
        "-H", "--header", action="append", default=[], metavar="KEY=VALUE", help="a header on every record"
    )
    produce.add_argument(
        "-p", "--partition", type=int, help="[default: by key as the Java client, else one partition]"
    )
    produce.add_argument("--acks", type=int, choices=(-1, 0, 1), default=-1, help="[default -1, all]")
    consume = sub.add_parser("consume", help="print records; waits for more unless -e or -n")
    consume.add_argument("topic")
    consume.add_argument("-p", "--partition", type=int, action="append", help="only these partitions")
    consume.add_argument(
        "-o",
        "--offset",
        default=None,
        help="start, end, N, -N (N before the end) or @TIME (ms or ISO date-time) [default start, "
        "or the group's committed offsets with -g]",
    )
    consume.add_argument(
        "-g", "--group", help="start at the group's committed offsets and commit where it stops"
    )
    consume.add_argument("-n", "--num", type=int, help="stop after this many records")
    consume.add_argument("-e", "--exit", action="store_true", help="stop at the end of every partition")
    consume.add_argument("-f", "--format", default=DEFAULT_FORMAT, help=FORMAT_HELP)
    for p in (create, lister, describe, delete, produce, consume):
        _bootstrap_argument(p)


def build_group_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    lister = sub.add_parser("list", help="list consumer groups")
    describe = sub.add_parser("describe", help="members, committed offsets and lag of groups")
    describe.add_argument("groups", nargs="+", metavar="GROUP")
    seek = sub.add_parser("seek", help="move a group's committed offsets (the group must have no members)")
    seek.add_argument("group")
    seek.add_argument("--to", required=True, help="start, end, an offset, or @TIME (ms or ISO date-time)")
    seek.add_argument(
        "--topic", action="append", help="TOPIC or TOPIC:P,P… [default: every topic the group committed]"
    )
    for p in (lister, describe, seek):
        _bootstrap_argument(p)


def run_topic(args: argparse.Namespace) -> int:
    return _run(f"topic {args.action}", args, sys.stdout, sys.stdin)


def run_group(args: argparse.Namespace) -> int:
    return _run(f"group {args.action}", args, sys.stdout, sys.stdin)


def _run(command: str, args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    try:
        with KafkaSession(args.bootstrap) as kafka:
            return _COMMANDS[command](kafka, args, out, stdin)
    except (ToolError, ValueError) as exc:
        print(f"kbroker {command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _table(out: TextIO, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [list(header), *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out)


# ---- topic ---------------------------------------------------------------------------------------------------


def _configs(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"a config is KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _topic_create(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    configs = _configs(args.config)
    status = 0
    for name in args.topics:
        try:
            kafka.create_topic(name, args.partitions, args.replicas, configs)
            print(f"created topic {name}", file=out)
        except ToolError as exc:
            print(f"kbroker topic create: {exc}", file=sys.stderr)
            status = 1
    return status


def _topic_list(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    cluster = kafka.cluster()
    rows = [
        (t.name, len(t.partitions), len(t.partitions[0].replicas) if t.partitions else 0)
        for t in sorted(cluster.topics.values(), key=lambda t: t.name)
        if args.internal or not t.is_internal
    ]
    _table(out, ("NAME", "PARTITIONS", "REPLICAS"), rows)
    return 0


def _topic_describe(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    for i, name in enumerate(args.topics):
        if i:
            print(file=out)
        info = kafka.topic(name)
        parts = [p.partition for p in info.partitions]
        starts = kafka.list_offsets(name, parts, EARLIEST)
        ends = kafka.list_offsets(name, parts, LATEST)
        print(f"NAME        {info.name}", file=out)
        print(f"TOPIC-ID    {info.topic_id}", file=out)
        print(f"INTERNAL    {str(info.is_internal).lower()}", file=out)
        print(f"PARTITIONS  {len(info.partitions)}", file=out)
        replicas = len(info.partitions[0].replicas) if info.partitions else 0
        print(f"REPLICAS    {replicas}", file=out)
        configs = [c for c in kafka.topic_configs(name) if not c.is_default]
        if configs:
            print("\nCONFIGS", file=out)
            _table(
                out,
                ("KEY", "VALUE", "SOURCE"),
                [(c.name, c.value, SOURCES.get(c.source, c.source)) for c in configs],
            )
        print("\nPARTITIONS", file=out)
        _table(
            out,
            ("PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "LOG-START-OFFSET", "HIGH-WATERMARK"),
            [
                (
                    p.partition,
                    p.leader,
                    p.leader_epoch,
                    ",".join(map(str, p.replicas)),
                    ",".join(map(str, p.isr)),
                    starts.get(p.partition, -1),
                    ends.get(p.partition, -1),
                )
                for p in info.partitions
            ],
        )
    return 0


def _topic_delete(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    status = 0
    for name in args.topics:
        try:
            kafka.delete_topic(name)
            print(f"deleted topic {name}", file=out)
        except ToolError as exc:
            print(f"kbroker topic delete: {exc}", file=sys.stderr)
            status = 1
    return status


def _topic_produce(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    info = kafka.topic(args.topic)
    count = len(info.partitions)
    if args.partition is not None and not 0 <= args.partition < count:
        raise ValueError(f"{args.topic} has partitions 0-{count - 1}, not {args.partition}")
    headers = tuple(parse_header(h) for h in args.header)
    # Records without a key all go to one partition per run (the Java client's sticky choice, in one batch).
    sticky = args.partition if args.partition is not None else random.randrange(count)
    pending: dict[int, list[tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]]] = {}
    written = 0

    def flush(partition: int) -> None:
        nonlocal written
        records = pending.pop(partition, [])
        if records:
            offset = kafka.produce(args.topic, partition, records, acks=args.acks)
            written += len(records)
            if args.acks != 0:
                print(
                    f"produced {len(records)} to {args.topic}-{partition} at offset {offset}", file=sys.stderr
                )

    for line in stdin:
        line = line.rstrip("\n")
        key: bytes | None = None
        value = line
        if args.key_separator:
            k, sep, v = line.partition(args.key_separator)
            if sep:
                key, value = k.encode(), v
        if args.partition is not None:
            partition = args.partition
        elif key is not None:
            partition = partition_for_key(key, count)
        else:
            partition = sticky
        pending.setdefault(partition, []).append((key, value.encode(), headers))
        if len(pending[partition]) >= BATCH_RECORDS:
            flush(partition)
    for partition in list(pending):
        flush(partition)
    return 0


def _start_offset(spec: str, kafka: KafkaSession, topic: str, partitions: list[int]) -> dict[int, int]:
    ends = kafka.list_offsets(topic, partitions, LATEST)
    if spec in ("start", "beginning", "earliest"):
        return kafka.list_offsets(topic, partitions, EARLIEST)
    if spec in ("end", "latest"):
        return ends
    if spec.startswith("@"):
        found = kafka.list_offsets(topic, partitions, parse_time_ms(spec[1:]))
        # No record that recent: start at the end, as a consumer resetting by time does.
        return {p: o if o >= 0 else ends[p] for p, o in found.items()}
    try:
        n = int(spec)
    except ValueError:
        raise ValueError(f"an offset is start, end, N, -N or @TIME, got {spec!r}") from None
    if n >= 0:
        return dict.fromkeys(partitions, n)
    starts = kafka.list_offsets(topic, partitions, EARLIEST)
    return {p: max(ends[p] + n, starts[p]) for p in partitions}


def _topic_consume(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    render = compile_format(args.format)
    info = kafka.topic(args.topic)
    partitions = args.partition or [p.partition for p in info.partitions]
    positions = _start_offset(args.offset or "start", kafka, args.topic, partitions)
    if args.group:
        committed = kafka.committed(args.group, [args.topic])
        if args.offset is None:
            for p in partitions:
                if committed.get((args.topic, p), -1) >= 0:
                    positions[p] = committed[(args.topic, p)]
    printed = 0
    try:
        while True:
            progressed = False
            at_end = True
            for p in partitions:
                messages, high_watermark = kafka.fetch(args.topic, p, positions[p])
                for m in messages:
                    out.write(render(m))
                    positions[p] = m.offset + 1
                    printed += 1
                    progressed = True
                    if args.num is not None and printed >= args.num:
                        return 0
                if positions[p] < high_watermark:
                    at_end = False
            out.flush()
            if args.exit and at_end:
                return 0
            if not progressed:
                time.sleep(0.2)
    finally:
        out.flush()
        if args.group:
            kafka.commit(args.group, {(args.topic, p): o for p, o in positions.items()})


# ---- group ---------------------------------------------------------------------------------------------------


def _group_list(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    rows = [(group, state or "-", kind or "-", node) for group, state, kind, node in kafka.list_groups()]
    _table(out, ("GROUP", "STATE", "PROTOCOL-TYPE", "COORDINATOR"), rows)
    return 0


def lag_rows(lags: Sequence[PartitionLag]) -> list[tuple[object, ...]]:
    return [
        (
            lag.topic,
            lag.partition,
            lag.committed if lag.committed >= 0 else "-",
            lag.log_end,
            "-" if lag.lag is None else lag.lag,
            lag.member_id or "-",
            lag.client_id or "-",
            lag.host or "-",
        )
        for lag in lags
    ]


LAG_HEADER = (
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "MEMBER-ID",
    "CLIENT-ID",
    "HOST",
)


def _group_describe(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    for i, group in enumerate(args.groups):
        if i:
            print(file=out)
        info, lags = kafka.lag(group)
        total = sum(lag.lag or 0 for lag in lags)
        print(f"GROUP        {info.group_id}", file=out)
        print(f"COORDINATOR  {info.coordinator}", file=out)
        print(f"STATE        {info.state}", file=out)
        print(f"MEMBERS      {len(info.members)}", file=out)
        print(f"TOTAL-LAG    {total}", file=out)
        print(file=out)
        _table(out, LAG_HEADER, lag_rows(lags))
    return 0


def _seek_targets(kafka: KafkaSession, args: argparse.Namespace) -> dict[str, list[int]]:
    if not args.topic:
        targets: dict[str, list[int]] = {}
        for topic, partition in kafka.committed(args.group):
            targets.setdefault(topic, []).append(partition)
        if not targets:
            raise ValueError(f"group {args.group} has committed nothing: name the topics with --topic")
        return targets
    targets = {}
    for item in args.topic:
        topic, _, parts = item.partition(":")
        if parts:
            targets[topic] = [int(p) for p in parts.split(",")]
        else:
            targets[topic] = [p.partition for p in kafka.topic(topic).partitions]
    return targets


def _group_seek(kafka: KafkaSession, args: argparse.Namespace, out: TextIO, _: TextIO) -> int:
    info = kafka.describe_group(args.group)
    if info.members:
        raise ToolError(
            f"group {args.group} has {len(info.members)} active members (state {info.state}): stop them first"
        )
    offsets: dict[tuple[str, int], int] = {}
    for topic, partitions in _seek_targets(kafka, args).items():
        for partition, offset in _start_offset(args.to, kafka, topic, sorted(partitions)).items():
            offsets[(topic, partition)] = offset
    kafka.commit(args.group, offsets)
    _table(out, ("TOPIC", "PARTITION", "NEW-OFFSET"), [(t, p, o) for (t, p), o in sorted(offsets.items())])
    return 0


_COMMANDS = {
    "topic create": _topic_create,
    "topic list": _topic_list,
    "topic describe": _topic_describe,
    "topic delete": _topic_delete,
    "topic produce": _topic_produce,
    "topic consume": _topic_consume,
    "group list": _group_list,
    "group describe": _group_describe,
    "group seek": _group_seek,
}
