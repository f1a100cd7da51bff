"""The web console in a real browser: Debian's headless Chromium driven by Playwright for Python.

Every page is opened as a user would (the URL's #fragment), a screenshot is taken, and what the page shows is
checked against what the test put into the broker (topics, records, a group's offsets): the content, not the pixels.
Screenshots land in the test's temporary directory, or in $KBROKER_CONSOLE_SCREENSHOTS when set (the README's
picture is taken that way). Playwright's own browser download cannot work here: it launches /usr/bin/chromium
(apt package chromium, installed by scripts/test) with a fresh profile.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from kbroker.replication.client import SyncBrokerClient
from kbroker.tools.session import KafkaSession
from protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from tests.broker_process import BrokerProcess, free_port
from tests.conftest import BrokerFactory, missing_tool

pytestmark = pytest.mark.timeout(180)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if shutil.which(CHROMIUM) is None:
        missing_tool(f"{CHROMIUM} is not installed (apt package chromium)")
    with sync_playwright() as playwright:
        # headless, and a fresh temporary profile (--user-data-dir) made by Playwright for this launch
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def console(broker_factory: BrokerFactory) -> tuple[BrokerProcess, str]:
    port = free_port()
    broker = broker_factory(overrides={"admin.listener": f"http://127.0.0.1:{port}"})
    return broker, f"http://127.0.0.1:{port}"


def shots_dir(tmp_path: Path) -> Path:
    where = Path(os.environ.get("KBROKER_CONSOLE_SCREENSHOTS") or tmp_path / "screenshots")
    where.mkdir(parents=True, exist_ok=True)
    return where


def open_page(page: Page, base: str, fragment: str) -> None:
    """Open a page of the console and wait until it has drawn itself from the API."""
    page.goto(f"{base}/{fragment}")
    page.wait_for_selector(f'body[data-ready="{fragment}"]', timeout=WAIT_MS)


def shoot(page: Page, where: Path, name: str) -> str:
    """A screenshot of the page, and the text it shows (what the screenshot holds)."""
    path = where / f"console-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000
    return page.inner_text("main")


def test_every_page_shows_the_brokers_state(
    browser: Browser, console: tuple[BrokerProcess, str], tmp_path: Path
) -> None:
    broker, base = console
    where = shots_dir(tmp_path)
    with KafkaSession(broker.bootstrap) as kafka:
        kafka.create_topic("orders", 3, -1, {"retention.ms": "86400000"})
        kafka.produce(
            "orders",
            0,
            [
                (b"order-1", json.dumps({"id": 1, "item": "book"}).encode(), (("source", b"web"),)),
                (b"order-2", b"plain text value", ()),
                (None, b"\x00\x01\xfe", ()),
            ],
        )
        kafka.produce("orders", 1, [(b"order-3", b"{}", ())])
        kafka.commit("billing", {("orders", 0): 1, ("orders", 1): 1, ("orders", 2): 0})
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

    open_page(page, base, "#/")
    text = shoot(page, where, "cluster")
    assert "Cluster " in text
    assert "single node" in text
    assert f"{broker.port}" in text
    assert "Under-replicated\n0" in text

    open_page(page, base, "#/topics")
    text = shoot(page, where, "topics")
    assert "Topics (2)" in text  # orders and __consumer_offsets
    row = page.locator("tr", has=page.locator('a[href="#/topics/orders"]'))
    assert row.inner_text().split("\t")[:5] == ["orders", "3", "1", "0", "0"]
    page.fill("#topic-filter", "consumer")
    assert page.locator('a[href="#/topics/orders"]').count() == 0

    open_page(page, base, "#/topics/orders")
    text = shoot(page, where, "topic")
    assert "Topic orders" in text
    assert "retention.ms\t86400000\ttopic" in text
    rows = page.locator("main table").first.locator("tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).inner_text().split("\t")[:7] == ["0", "0", "0", "0", "0", "0", "3"]

    # Browse partition 0 from the start, as JSON, then as hex.
    page.select_option("#browse select[name=mode]", "json")
    page.click("#browse button")
    page.wait_for_selector("#messages table", timeout=WAIT_MS)
    text = shoot(page, where, "messages")
    assert "3 messages of partition 0 from offset 0 (high watermark 3)" in text
    assert '"item": "book"' in text  # pretty-printed JSON
    assert "plain text value" in text
    assert "binary, 3 bytes" in text
    assert "source=web" in text
    page.select_option("#browse select[name=mode]", "hex")
    page.fill("#browse input[name=offset]", "2")
    page.click("#browse button")
    page.wait_for_selector("#messages >> text=1 messages of partition 0 from offset 2", timeout=WAIT_MS)
    assert "00 01 fe" in page.inner_text("#messages")

    # Produce a test message, then find it by browsing.
    page.fill("#produce input[name=key]", "console-key")
    page.fill("#produce input[name=value]", "from the console")
    page.fill("#produce input[name=headers]", "via=test")
    page.click("#produce button")
    page.wait_for_selector("#produced .notice", timeout=WAIT_MS)
    produced = page.inner_text("#produced")
    partition = int(produced.split("partition ")[1].split()[0])
    with KafkaSession(broker.bootstrap) as kafka:
        messages, _ = kafka.fetch("orders", partition, 0)
    assert [(m.key, m.value, m.headers) for m in messages if m.key == b"console-key"] == [
        (b"console-key", b"from the console", (("via", b"test"),))
    ]

    open_page(page, base, "#/groups")
    text = shoot(page, where, "groups")
    assert "Consumer groups (1)" in text
    assert "billing\tEmpty" in text

    open_page(page, base, "#/groups/billing")
    text = shoot(page, where, "group")
    assert "Consumer group billing" in text
    # committed 1, 1, 0; the logs hold 3, 1, 0 records plus the console's one
    ends = [3, 1, 0]
    ends[partition] += 1
    assert f"Total lag\n{sum(ends) - 2}" in text
    assert f"orders\t0\t1\t{ends[0]}\t{ends[0] - 1}" in text
    assert "Lag over time" in text
    # The page polls every 5 s: from the second answer on, the lag is drawn as a line over time.
    page.wait_for_selector("#lag-chart svg polyline", state="attached", timeout=WAIT_MS)
    assert len(page.get_attribute("#lag-chart polyline", "points").split()) >= 2  # type: ignore[union-attr]
    shoot(page, where, "group-lag")
    assert errors == []


def test_create_and_delete_a_topic_behind_a_confirmation(
    browser: Browser, console: tuple[BrokerProcess, str], tmp_path: Path
) -> None:
    broker, base = console
    where = shots_dir(tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, base, "#/topics")
    page.fill("#create-topic input[name=name]", "made-in-console")
    page.fill("#create-topic input[name=partitions]", "2")
    page.fill("#create-topic textarea[name=configs]", "cleanup.policy=compact")
    page.click("#create-topic button")
    page.wait_for_selector("#confirm[open]", timeout=WAIT_MS)
    assert page.inner_text("#confirm-text") == "Create topic made-in-console?"
    page.click("#confirm-ok")
    page.wait_for_selector('body[data-ready="#/topics/made-in-console"]', timeout=WAIT_MS)
    with KafkaSession(broker.bootstrap) as kafka:
        assert len(kafka.topic("made-in-console").partitions) == 2
        configs = {c.name: c.value for c in kafka.topic_configs("made-in-console")}
    assert configs["cleanup.policy"] == "compact"

    # A wrong name typed into the confirmation deletes nothing.
    page.click("#delete-topic")
    page.wait_for_selector("#confirm[open]", timeout=WAIT_MS)
    page.fill("#confirm-name", "made-in")
    page.click("#confirm-ok")
    page.wait_for_selector("#delete-notice .error", timeout=WAIT_MS)
    with KafkaSession(broker.bootstrap) as kafka:
        kafka.topic("made-in-console")

    page.click("#delete-topic")
    page.wait_for_selector("#confirm[open]", timeout=WAIT_MS)
    shoot(page, where, "delete-confirmation")
    page.fill("#confirm-name", "made-in-console")
    page.click("#confirm-ok")
    page.wait_for_selector('body[data-ready="#/topics"]', timeout=WAIT_MS)
    assert page.locator('a[href="#/topics/made-in-console"]').count() == 0
    with KafkaSession(broker.bootstrap) as kafka:
        assert "made-in-console" not in kafka.cluster().topics


def create_topics(broker: BrokerProcess, names: list[str]) -> None:
    """Many topics in one CreateTopics request."""
    with SyncBrokerClient(broker.host, broker.port, timeout=120) as client:
        response = client.request(
            CreateTopicsRequest(
                topics=[CreatableTopic(name=n, num_partitions=1, replication_factor=1) for n in names],
                timeout_ms=120_000,
            ),
            5,
        )
    assert [t.error_code for t in response.topics] == [0] * len(names)


def test_the_topics_page_lists_a_thousand_topics(
    browser: Browser, console: tuple[BrokerProcess, str]
) -> None:
    """How fast it loads is measured by bench/console_load.py (never by a timed test); this checks it shows them."""
    broker, base = console
    create_topics(broker, [f"t{i:04d}" for i in range(1000)])
    assert len(httpx.get(f"{base}/api/topics", timeout=30).json()) == 1001
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    open_page(page, base, "#/topics")
    assert "Topics (1001)" in page.inner_text("main h1")
    assert page.locator("#topic-table tbody tr").count() == 1001
    page.fill("#topic-filter", "t099")
    assert page.locator("#topic-table tbody tr").count() == 10
