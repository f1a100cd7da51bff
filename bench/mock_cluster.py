"""Host librdkafka's in-process mock cluster in a process of its own, for bench/run.py.

The mock broker lives inside a librdkafka client (`test.mock.num.brokers`). Hosting it here, rather than inside the
benchmark process, gives it the same position as kbroker: a separate process from the load generator, whose CPU time
can be read from /proc/PID/stat. The process also holds the (idle) client that owns the mock.

Prints one line `BOOTSTRAP host:port[,host:port…]` on stdout, then runs until stdin is closed or it gets SIGTERM.
"""

from __future__ import annotations

import argparse
import sys

import confluent_kafka


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brokers", type=int, default=1, help="number of mock brokers [1]")
    args = parser.parse_args()
    owner = confluent_kafka.Producer(
        {"test.mock.num.brokers": args.brokers, "log.connection.close": False, "log_level": 4}
    )
    metadata = owner.list_topics(timeout=10)
    addresses = sorted(f"{b.host}:{b.port}" for b in metadata.brokers.values())
    print("BOOTSTRAP " + ",".join(addresses), flush=True)
    sys.stdin.read()  # the parent closes our stdin (or kills us) to stop the mock
    return 0


if __name__ == "__main__":
    sys.exit(main())
