"""`kbroker serve`: the command line, shaped like Kafka's own (`--override key=value`, a properties file).

SIGTERM and SIGINT stop the broker cleanly from the first moment, start-up included (a cluster node still waiting for
etcd stops at once). Once started, a cluster node first shuts down in a controlled way (its leaderships move to other
replicas, see app.Broker.controlled_shutdown); a second signal stops it at once. What keeps a broker from starting is
said in one line on stderr: status 2 for a bad setting, 1 for anything else (a taken port, a data directory another
broker holds).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from pathlib import Path

import trio

from kbroker import logs
from kbroker.common import ConfigError, StartupError
from kbroker.config import BROKER_CONFIGS, BrokerConfig, parse_properties
from kbroker.security.scram import AddScram, parse_add_scram

log = logging.getLogger("kbroker")


def _configs_epilog() -> str:
    lines = ["broker configs (Kafka's names; set with --override KEY=VALUE or in --config FILE):"]
    for d in BROKER_CONFIGS.values():
        default = "" if d.default is None else f" [default {d.default}]"
        lines.append(f"  {d.name:<38} {d.doc}{default}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kbroker", description="A Kafka wire-protocol compatible broker.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve",
        help="run a broker",
        description="Run a broker. Single node by default; with --metadata etcd://… it joins a cluster.",
        epilog=_configs_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--data-dir", help="data directory (log.dirs) [default ./kbroker-data]")
    serve.add_argument(
        "--listeners",
        help="NAME://HOST:PORT,… e.g. SASL_SSL://127.0.0.1:9094,PLAINTEXT://127.0.0.1:9092 "
        "[default PLAINTEXT://127.0.0.1:9092]",
    )
    serve.add_argument(
        "--advertised-listeners",
        help="NAME://HOST:PORT,… given to clients of each listener [default: --listeners]",
    )
    serve.add_argument("--config", type=Path, help="a properties file of broker configs")
    serve.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a broker config (repeatable)",
    )
    serve.add_argument("--node-id", type=int, help="this broker's id (node.id) [default 0]")
    serve.add_argument(
        "--metadata", help="etcd://HOST:PORT[,HOST:PORT…]: join a cluster whose metadata lives in etcd"
    )
    serve.add_argument(
        "--add-scram",
        action="append",
        default=[],
        metavar="'SCRAM-SHA-512=[name=USER,password=PASSWORD]'",
        help="a first SCRAM credential, in kafka-storage format's syntax (repeatable; a user's existing credential "
        "for that mechanism is kept)",
    )
    serve.add_argument(
        "--log-level",
        action="append",
        default=[],
        metavar="[MODULE=]LEVEL",
        help="DEBUG, INFO, WARNING, ERROR for everything, or MODULE=LEVEL for one logger and those under it, "
        "e.g. kbroker.replication=DEBUG (repeatable) [default INFO]",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text lines or JSON objects [default text]",
    )
    serve.add_argument(
        "--log-requests",
        type=int,
        default=0,
        metavar="N",
        help="log every N-th request on the logger kbroker.request (1: every request) [default 0: none]",
    )
    from kbroker.replication import topics_tool

    topics_tool.build_parser(
        sub.add_parser(
            "topics",
            help="describe topics: leaders, replicas, ISR (like kafka-topics.sh)",
            description="Describe topics through a broker's Metadata (like kafka-topics.sh --describe).",
        )
    )
    from kbroker.tools import commands

    commands.build_topic_parser(
        sub.add_parser(
            "topic",
            help="create, list, describe, delete, produce to and consume from topics (like rpk topic)",
            description="Topics through any broker, over Kafka's protocol: create, list, describe, delete, "
            "produce (lines of stdin) and consume.",
        )
    )
    commands.build_group_parser(
        sub.add_parser(
            "group",
            help="list and describe consumer groups with their lag, seek their offsets (like rpk group)",
            description="Consumer groups through any broker, over Kafka's protocol.",
        )
    )
    return parser


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    values: dict[str, str] = {}
    if args.config is not None:
        values.update(parse_properties(args.config.read_text()))
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--override needs KEY=VALUE, got {item!r}")
        values[key.strip()] = value.strip()
    if args.data_dir is not None:
        values["log.dirs"] = args.data_dir
    if args.listeners is not None:
        values["listeners"] = args.listeners
    if args.advertised_listeners is not None:
        values["advertised.listeners"] = args.advertised_listeners
    if args.node_id is not None:
        values["node.id"] = str(args.node_id)
    if args.metadata is not None:
        if not args.metadata.startswith("etcd://"):
            raise ConfigError(f"--metadata must be etcd://HOST:PORT[,HOST:PORT…], got {args.metadata!r}")
        values["metadata.etcd.endpoints"] = args.metadata.removeprefix("etcd://")
    return BrokerConfig.from_properties(values)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "topics":
        from kbroker.replication import topics_tool

        return topics_tool.run(args)
    if args.command in ("topic", "group"):
        from kbroker.tools import commands

        return commands.run_topic(args) if args.command == "topic" else commands.run_group(args)
    try:
        logs.configure(args.log_level or ["INFO"], args.log_format)
        if args.log_requests < 0:
            raise ValueError("--log-requests must be 0 (off) or more")
        config = config_from_args(args)
        add_scram = tuple(parse_add_scram(text) for text in args.add_scram)
    except (ConfigError, OSError, ValueError) as exc:
        print(f"kbroker: {logs.redact(str(exc))}", file=sys.stderr)
        return 2
    return serve(config, add_scram, log_requests=args.log_requests)


def _freeze_startup_objects() -> None:
    """Keep what start-up built (modules, the protocol's schemas, the recovered logs' state, the metadata image) out
    of the garbage collector's full collections: they live as long as the process, and scanning them made every
    full collection a pause of tens of milliseconds on the event loop (p99 latency). A collection first, so that
    start-up's garbage is not kept for good. Run before the listener accepts: that collection takes 15-45 ms, which
    the first client's first request used to wait for."""
    gc.collect()
    gc.freeze()


def serve(config: BrokerConfig, add_scram: tuple[AddScram, ...] = (), *, log_requests: int = 0) -> int:
    """Run the broker until SIGTERM/SIGINT; the exit status."""
    # Imported here: `kbroker topics` and `--help` need none of the broker.
    from kbroker.app import run_broker

    async def run() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                stop = trio.Event()
                started = False

                async def stop_on_signal() -> None:
                    async for signum in signals:
                        log.info("received %s, shutting down", signal.Signals(signum).name)
                        if not started or stop.is_set():
                            # Still starting (nothing to hand over yet), or asked a second time: stop at once.
                            nursery.cancel_scope.cancel()
                            return
                        stop.set()  # a controlled shutdown first (app.Broker.controlled_shutdown)

                async def broker(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
                    await run_broker(
                        config,
                        add_scram=add_scram,
                        log_requests=log_requests,
                        stop=stop,
                        before_listening=_freeze_startup_objects,
                        task_status=task_status,
                    )
                    nursery.cancel_scope.cancel()

                # Signals are watched before anything starts, so a broker can be stopped during start-up too.
                nursery.start_soon(stop_on_signal)
                await nursery.start(broker)
                started = True

    try:
        trio.run(run)
    except BaseException as exc:
        reason = _startup_failure(exc, (ConfigError, StartupError))
        if reason is None:
            raise
        print(f"kbroker: {logs.redact(str(reason))}", file=sys.stderr)
        return 2 if isinstance(reason, ConfigError) else 1
    log.info("broker stopped")
    return 0


def _startup_failure(exc: BaseException, kinds: tuple[type[Exception], ...]) -> Exception | None:
    """The expected failure inside `exc` (itself, or the one leaf of nested exception groups), else None."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, kinds) else None
