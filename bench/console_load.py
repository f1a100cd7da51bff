"""How long the web console's topic list takes to load with 1,000 topics (the issue asks for under a second).

A broker with the admin listener on, 1,000 one-partition topics created in one CreateTopics request, then Debian's
headless Chromium (through Playwright, as tests/test_console.py drives it) opens `#/topics` in a fresh page several
times: the time from the navigation's start to the page having drawn every row (the console sets
`body[data-ready]` once the API answered and the table is in the DOM), and the API call alone. Medians, written to
bench/results-console.md.

    .venv/bin/python bench/console_load.py [--topics 1000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kbroker.replication.client import SyncBrokerClient  # noqa: E402
from protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest  # noqa: E402
from tests.broker_process import BrokerProcess, free_port  # noqa: E402
from tests.test_console import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results-console.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        broker = BrokerProcess(
            Path(tmp) / "data", overrides={"admin.listener": base}, log_path=Path(tmp) / "log"
        )
        broker.start()
        try:
            with SyncBrokerClient(broker.host, broker.port, timeout=600) as client:
                client.request(
                    CreateTopicsRequest(
                        topics=[
                            CreatableTopic(name=f"t{i:05d}", num_partitions=1, replication_factor=1)
                            for i in range(args.topics)
                        ],
                        timeout_ms=600_000,
                    ),
                    5,
                )
            api_ms, page_ms = [], []
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for _ in range(args.rounds):
                    started = time.perf_counter()
                    count = len(httpx.get(f"{base}/api/topics", timeout=60).json())
                    api_ms.append((time.perf_counter() - started) * 1000)
                    page = browser.new_page()
                    page.goto(f"{base}/#/topics")
                    page.wait_for_selector('body[data-ready="#/topics"]', timeout=60_000)
                    rows = page.locator("#topic-table tbody tr").count()
                    assert rows == count, (rows, count)
                    page_ms.append(float(page.evaluate("document.body.dataset.drawnAt")))
                    page.close()
                browser.close()
        finally:
            broker.stop()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    text = (
        f"# Web console load time ({time.strftime('%Y-%m-%d')}, commit {commit.stdout.strip()})\n\n"
        f"`bench/console_load.py --topics {args.topics} --rounds {args.rounds}`: a single node with {count} topics "
        "(the given ones and `__consumer_offsets`), Debian's headless Chromium through Playwright, each round a new "
        "page. *Page*: from the navigation's start until every row of the topic list is in the DOM; *API*: "
        "`GET /api/topics` alone, from Python. Medians (min-max) in ms.\n\n"
        "| topics | page load | API |\n|---|---|---|\n"
        f"| {count} | {statistics.median(page_ms):.0f} ({min(page_ms):.0f}-{max(page_ms):.0f}) "
        f"| {statistics.median(api_ms):.0f} ({min(api_ms):.0f}-{max(api_ms):.0f}) |\n"
    )
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
