"""Start Apache Kafka by hand, in the foreground, to compare its behaviour with kbroker's.

    .venv/bin/python -m compat.kafka.run --version 3.9.2
    .venv/bin/python -m compat.kafka.run --version 4.3.1 --nodes 3
    .venv/bin/python -m compat.kafka.run --version 3.9.2 --port 9092 --override message.max.bytes=2000000

Resolves the release's jars first if need be (mvn, once), starts KRaft nodes on 127.0.0.1, prints the bootstrap
address, and runs until Ctrl-C or SIGTERM, then stops the nodes by pid. Config, data and logs are under --dir
(default: a new temporary directory, removed after a clean stop and kept when Kafka fails). The release's CLI tools
run from the same jars through compat/kafka/tools.py: the line printed after the bootstrap shows how.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from compat.kafka import KAFKA_3
from compat.kafka.install import InstallFailed, install
from compat.kafka.process import KafkaCluster, KafkaFailed, KafkaProcess


def parse_override(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m compat.kafka.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", default=KAFKA_3, help="Apache Kafka release (default: %(default)s)")
    parser.add_argument(
        "--nodes", type=int, default=1, help="KRaft nodes, each broker and voter (default: 1)"
    )
    parser.add_argument("--port", type=int, help="the client port of a single node (default: a free one)")
    parser.add_argument(
        "--dir", type=Path, help="where config, data and logs go (kept; default: a temporary one)"
    )
    parser.add_argument(
        "--override",
        type=parse_override,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a server.properties setting (repeatable)",
    )
    parser.add_argument("--java", help="the java binary (default: java on PATH)")
    args = parser.parse_args(argv)
    if args.nodes < 1:
        parser.error("--nodes must be at least 1")
    if args.port is not None and args.nodes != 1:
        parser.error("--port is for a single node")
    return args


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        libs = install(args.version)
    except InstallFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    base = args.dir or Path(tempfile.mkdtemp(prefix=f"kafka-{args.version}-"))
    overrides = dict(args.override)
    kafka: KafkaProcess | KafkaCluster
    if args.nodes == 1:
        kafka = KafkaProcess(args.version, base, port=args.port, overrides=overrides, java=args.java)
        nodes = [kafka]
    else:
        kafka = KafkaCluster(args.version, base, size=args.nodes, overrides=overrides, java=args.java)
        nodes = kafka.nodes
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    started = time.monotonic()
    failed = False
    try:
        kafka.start()
        print(f"Apache Kafka {args.version} ready in {time.monotonic() - started:.1f} s", flush=True)
        print(f"bootstrap: {kafka.bootstrap}")
        for node in nodes:
            print(f"node {node.node_id}: pid {node.pid}, config {node.config_path}, log {node.log_path}")
        tool = [sys.executable, "-m", "compat.kafka.tools", "--version", args.version, "kafka-topics"]
        print(f"tools ({libs}): {shlex.join([*tool, '--bootstrap-server', kafka.bootstrap, '--list'])}")
        print("Ctrl-C stops it.", flush=True)
        while all(node.is_running() for node in nodes):
            time.sleep(0.5)
        failed = True
        for node in nodes:
            if not node.is_running():
                print(
                    f"node {node.node_id} exited with {node.returncode()}:\n{node.log_tail()}",
                    file=sys.stderr,
                )
    except KafkaFailed as error:
        failed = True
        print(f"error: {error}", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        kafka.stop()
    if failed:
        print(f"kept {base}", file=sys.stderr)
        return 1
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
