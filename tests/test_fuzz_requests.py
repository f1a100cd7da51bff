"""Structured fuzzing of a running broker over its socket: every request type at every version the broker advertises,
drawn from the message schemas (tests/test_codec_strategies.py: every field at its full wire width, so boundary
values such as -1, 0, 2**31-1 and empty arrays come up often), then sent as drawn or spoiled: an unknown tagged field,
a version the header lies about (the next one up, one below, an unsupported one), 4-byte runs of 0xff / 0x7f / 0x00
over the body (negative and huge lengths and counts), flipped, inserted or deleted bytes, a truncated body.

Meanwhile a well-behaved confluent-kafka producer writes on its own connection (tests/test_bad_input.py Bystander).
After each request the fuzzing connection may have an answer, be closed, or still wait (a parked Fetch or JoinGroup,
acks=0); whatever it does, a fresh connection must get ApiVersions answered at once (the broker neither crashed nor
hangs). At the end every record the producer sent was acknowledged and reads back in order, and the broker's memory
(RSS) grew by less than MEMORY_BOUND_MB.

`KBROKER_FUZZ_EXAMPLES=N` draws N requests instead of the CI default (scripts/kbroker-fuzz runs it longer).
"""

from __future__ import annotations

import os
import socket
import struct
import time
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbroker.replication.client import SyncBrokerClient
from protocol.codec import encode
from protocol.headers import request_header_version
from protocol.messages import REQUESTS, SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.primitives import encode_uvarint
from tests.broker_process import BrokerProcess, rss_mib
from tests.test_bad_input import Bystander
from tests.test_codec_fuzz import _MUTATION, _mutate
from tests.test_codec_strategies import message_strategy

pytestmark = pytest.mark.timeout(600)

EXAMPLES = int(os.environ.get("KBROKER_FUZZ_EXAMPLES", "200"))
ANSWER_WAIT_S = 0.5
ALIVE_TIMEOUT_S = 5.0
MEMORY_BOUND_MB = 150
SPOILERS = ["as-drawn", "unknown-tagged-field", "wrong-version", "mutated", "truncated"]


@dataclass(frozen=True)
class Wire:
    api_key: int
    version: int  # what the header says
    flexible_header: bool
    body: bytes
    what: str

    def frame(self, correlation_id: int) -> bytes:
        client_id = b"fuzz"
        header = struct.pack(">hhih", self.api_key, self.version, correlation_id, len(client_id)) + client_id
        if self.flexible_header:
            header += b"\x00"
        payload = header + self.body
        return struct.pack(">i", len(payload)) + payload


def advertised(broker: BrokerProcess) -> list[tuple[type, int]]:
    """Every (request class, version) the broker's ApiVersions offers."""
    with SyncBrokerClient(broker.host, broker.port) as client:
        response = client.request(ApiVersionsRequest(), 2)
    by_key = {SCHEMAS[cls].api_key: cls for cls in REQUESTS.values()}
    pairs = []
    for api in response.api_keys:
        cls = by_key.get(api.api_key)
        if cls is None:
            continue
        valid = SCHEMAS[cls].valid
        pairs += [(cls, v) for v in range(max(api.min_version, valid.lo), min(api.max_version, valid.hi) + 1)]
    return sorted(pairs, key=lambda cv: (SCHEMAS[cv[0]].api_key, cv[1]))


@st.composite
def wire_requests(draw: st.DrawFn, pairs: list[tuple[type, int]]) -> Wire:
    cls, version = draw(st.sampled_from(pairs), label="request")
    schema = SCHEMAS[cls]
    body = encode(draw(message_strategy(cls, version), label="message"), version)
    spoiler = draw(st.sampled_from(SPOILERS), label="spoiler")
    claimed = version
    flexible = version in schema.flexible
    if spoiler == "unknown-tagged-field" and flexible and body.endswith(b"\x00"):
        tag = draw(st.integers(1000, 2**31 - 1))
        value = draw(st.binary(max_size=16))
        body = body[:-1] + encode_uvarint(1) + encode_uvarint(tag) + encode_uvarint(len(value)) + value
    elif spoiler == "wrong-version":
        claimed = draw(st.sampled_from([version + 1, version - 1, schema.valid.hi + 1, 32767, -1]))
    elif spoiler == "mutated":
        body = _mutate(body, draw(st.lists(_MUTATION, min_size=1, max_size=4)))
    elif spoiler == "truncated" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    header_flexible = claimed in schema.flexible if claimed >= 0 else False
    assert request_header_version(schema, version) == (2 if flexible else 1)
    return Wire(
        schema.api_key, claimed, header_flexible, body, f"{cls.__name__} v{version} {spoiler} as v{claimed}"
    )


def answer_or_close(sock: socket.socket, correlation_id: int) -> str:
    """What the broker did with the request within ANSWER_WAIT_S: answered (with our correlation id), closed, or
    nothing yet (parked, or acks=0)."""
    sock.settimeout(ANSWER_WAIT_S)
    data = b""
    try:
        while len(data) < 8:
            chunk = sock.recv(65536)
            if not chunk:
                return "closed"
            data += chunk
    except TimeoutError:
        return "waiting"
    except ConnectionResetError:
        return "closed"
    (found,) = struct.unpack(">i", data[4:8])
    assert found == correlation_id, f"answered with correlation id {found}, not {correlation_id}"
    return "answered"


def assert_alive(broker: BrokerProcess) -> None:
    assert broker.is_running(), "the broker exited"
    started = time.monotonic()
    with SyncBrokerClient(broker.host, broker.port, timeout=ALIVE_TIMEOUT_S) as client:
        response = client.request(ApiVersionsRequest(), 2)
    assert response.error_code == 0
    assert time.monotonic() - started < ALIVE_TIMEOUT_S


def test_fuzzed_requests_get_an_error_or_a_closed_connection_only(broker: BrokerProcess) -> None:
    bystander = Bystander(broker.bootstrap).start()
    pairs = advertised(broker)
    assert len({SCHEMAS[cls].api_key for cls, _ in pairs}) > 30
    outcomes: dict[str, int] = {}
    open_sockets: list[socket.socket] = []
    rss_before = rss_mib(broker.pid)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=os.environ.get("KBROKER_FUZZ_EXAMPLES") is None,  # CI: the same requests every run
        suppress_health_check=list(HealthCheck),
    )
    @given(wire=wire_requests(pairs))
    def send(wire: Wire) -> None:
        sock = socket.create_connection((broker.host, broker.port), timeout=ALIVE_TIMEOUT_S)
        try:
            sock.sendall(wire.frame(7))
            outcome = answer_or_close(sock, 7)
        except (BrokenPipeError, ConnectionResetError):
            outcome = "closed"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "waiting":
            open_sockets.append(sock)  # a parked request: leave it parked, the broker must cope
        else:
            sock.close()
        try:
            assert_alive(broker)
        except Exception as exc:
            raise AssertionError(f"after {wire.what}: {exc}\n{broker.log_tail()}") from exc

    try:
        send()
    finally:
        for sock in open_sockets:
            sock.close()
    print(f"{EXAMPLES} fuzzed requests: {outcomes}")
    assert "internal error" not in broker.log_path.read_text(), broker.log_tail()
    bystander.verify()
    assert_alive(broker)
    grown = rss_mib(broker.pid) - rss_before
    assert grown < MEMORY_BOUND_MB, f"the broker's memory grew by {grown:.0f} MB"
