"""ApiVersions, InitProducerId and FindCoordinator, tabled in process: (request, version) -> the error codes and
fields each version carries, against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py);
and a check that every registered handler has a table.

Rows marked `kafka_differs` state Kafka's answer where kbroker answers otherwise; their reason says both.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import kbroker.handlers  # noqa: F401  (importing the package registers every handler)
from kbroker.app import Broker
from kbroker.handlers.registry import HANDLERS
from protocol.errors import ErrorCode as E
from protocol.messages import ApiKey
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.api_versions_response import ApiVersionsResponse
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.find_coordinator_response import FindCoordinatorResponse
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.init_producer_id_response import InitProducerIdResponse
from tests.handler_tables import NODE, PORT, assert_answer, wire_call
from tests.inprocess import running_broker

pytestmark = pytest.mark.timeout(60)

# The file of each registered API's table `<API>_CASES` (a handler without one fails the last test here).
TABLES = {
    ApiKey.PRODUCE: "test_handlers_produce_fetch.py",
    ApiKey.FETCH: "test_handlers_produce_fetch.py",
    ApiKey.LIST_OFFSETS: "test_handlers_offsets.py",
    ApiKey.OFFSET_FOR_LEADER_EPOCH: "test_handlers_offsets.py",
    ApiKey.METADATA: "test_handlers_metadata.py",
    ApiKey.DESCRIBE_CLUSTER: "test_handlers_metadata.py",
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: "test_handlers_metadata.py",
    ApiKey.CREATE_TOPICS: "test_handlers_topics.py",
    ApiKey.DELETE_TOPICS: "test_handlers_topics.py",
    ApiKey.DESCRIBE_CONFIGS: "test_handlers_topics.py",
    ApiKey.JOIN_GROUP: "test_handlers_groups.py",
    ApiKey.SYNC_GROUP: "test_handlers_groups.py",
    ApiKey.HEARTBEAT: "test_handlers_groups.py",
    ApiKey.LEAVE_GROUP: "test_handlers_groups.py",
    ApiKey.OFFSET_COMMIT: "test_handlers_groups.py",
    ApiKey.OFFSET_FETCH: "test_handlers_groups.py",
    ApiKey.OFFSET_DELETE: "test_handlers_groups.py",
    ApiKey.DELETE_GROUPS: "test_handlers_groups.py",
    ApiKey.DESCRIBE_GROUPS: "test_handlers_groups.py",
    ApiKey.LIST_GROUPS: "test_handlers_groups.py",
    ApiKey.API_VERSIONS: "test_handlers_misc.py",
    ApiKey.INIT_PRODUCER_ID: "test_handlers_misc.py",
    ApiKey.FIND_COORDINATOR: "test_handlers_misc.py",
    ApiKey.DESCRIBE_PRODUCERS: "test_handlers_describe_producers.py",
    ApiKey.SASL_HANDSHAKE: "test_handlers_security.py",
    ApiKey.SASL_AUTHENTICATE: "test_handlers_security.py",
    ApiKey.CREATE_ACLS: "test_handlers_security.py",
    ApiKey.DESCRIBE_ACLS: "test_handlers_security.py",
    ApiKey.DELETE_ACLS: "test_handlers_security.py",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "test_handlers_security.py",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "test_handlers_security.py",
    ApiKey.ALTER_CLIENT_QUOTAS: "test_handlers_security.py",
    ApiKey.DESCRIBE_CLIENT_QUOTAS: "test_handlers_security.py",
    ApiKey.ADD_PARTITIONS_TO_TXN: "test_handlers_transactions.py",
    ApiKey.ADD_OFFSETS_TO_TXN: "test_handlers_transactions.py",
    ApiKey.END_TXN: "test_handlers_transactions.py",
    ApiKey.TXN_OFFSET_COMMIT: "test_handlers_transactions.py",
    ApiKey.WRITE_TXN_MARKERS: "test_handlers_transactions.py",
    ApiKey.DESCRIBE_TRANSACTIONS: "test_handlers_transactions.py",
    ApiKey.LIST_TRANSACTIONS: "test_handlers_transactions.py",
    ApiKey.CREATE_PARTITIONS: "test_handlers_admin.py",
    ApiKey.INCREMENTAL_ALTER_CONFIGS: "test_handlers_admin.py",
    ApiKey.ALTER_CONFIGS: "test_handlers_admin.py",
    ApiKey.DELETE_RECORDS: "test_handlers_admin.py",
    ApiKey.DESCRIBE_LOG_DIRS: "test_handlers_admin.py",
    ApiKey.ELECT_LEADERS: "test_handlers_admin.py",
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: "test_handlers_admin.py",
    ApiKey.LIST_PARTITION_REASSIGNMENTS: "test_handlers_admin.py",
}


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with running_broker(tmp_path / "data") as b:
        yield b


# ---- ApiVersions (v0-4) -----------------------------------------------------------------------------------------


def advertised(response: ApiVersionsResponse) -> dict[str, Any]:
    return {
        "error": response.error_code,
        "api_keys": {k.api_key: (k.min_version, k.max_version) for k in response.api_keys},
    }


REGISTERED = {int(key): (h.min_version, h.max_version) for key, h in HANDLERS.items()}


def software(name: str, version: str = "1.0") -> ApiVersionsRequest:
    return ApiVersionsRequest(client_software_name=name, client_software_version=version)


API_VERSIONS_CASES = [
    pytest.param(software("kafka-python", "2.0.2"), 0, {"error": E.NONE, "api_keys": REGISTERED}, id="v0"),
    pytest.param(software("kafka-python", "2.0.2"), 2, {"error": E.NONE, "api_keys": REGISTERED}, id="v2"),
    pytest.param(
        software("apache-kafka-java", "3.9.0"), 3, {"error": E.NONE, "api_keys": REGISTERED}, id="v3"
    ),
    pytest.param(software("librdkafka", "2.16.0"), 4, {"error": E.NONE, "api_keys": REGISTERED}, id="v4"),
    pytest.param(software("my client"), 3, {"error": E.INVALID_REQUEST}, id="v3-name-with-a-space"),
    pytest.param(software("client-", "1.0"), 3, {"error": E.INVALID_REQUEST}, id="v3-name-ending-in-a-dash"),
    pytest.param(software("client", "1.0+b"), 4, {"error": E.INVALID_REQUEST}, id="v4-bad-version"),
    pytest.param(software(""), 3, {"error": E.INVALID_REQUEST}, id="v3-empty-name"),
    pytest.param(software("my client"), 2, {"error": E.NONE, "api_keys": REGISTERED}, id="v2-sends-no-name"),
    pytest.param(
        software("my client"),
        3,
        {"error": E.INVALID_REQUEST, "api_keys": {}},
        id="v3-invalid-request-lists-no-api",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), API_VERSIONS_CASES)
async def test_api_versions(
    broker: Broker, request_: ApiVersionsRequest, version: int, expected: dict[str, Any]
) -> None:
    await assert_answer(broker, request_, version, advertised, expected)


def test_no_table_for_a_handler_that_is_not_registered() -> None:
    assert set(TABLES) <= set(HANDLERS)


# ---- InitProducerId (v0-5) --------------------------------------------------------------------------------------


def refused(error: E) -> dict[str, Any]:
    return {"error": error, "producer_id": -1, "producer_epoch": -1}


def producer_id(response: InitProducerIdResponse) -> dict[str, Any]:
    return {
        "error": response.error_code,
        "producer_id": response.producer_id,
        "producer_epoch": response.producer_epoch,
    }


INIT_PRODUCER_ID_CASES = [
    pytest.param(InitProducerIdRequest(transactional_id=None), 0, True, id="v0-idempotent"),
    pytest.param(
        InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000), 2, True, id="v2"
    ),
    pytest.param(
        InitProducerIdRequest(transactional_id=None, producer_id=5, producer_epoch=3),
        4,
        True,
        id="v4-an-idempotent-producer-asking-again-gets-a-new-id",
    ),
    pytest.param(InitProducerIdRequest(transactional_id=None), 5, True, id="v5"),
    # Transactional ids (their coordinator's answers: tests/test_handlers_transactions.py), as Kafka checks them
    # before looking for the coordinator.
    pytest.param(
        InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60_000),
        5,
        refused(E.NOT_COORDINATOR),
        id="transactional-id-without-its-coordinator-here",
    ),
    pytest.param(
        InitProducerIdRequest(transactional_id="tx"),
        0,
        refused(E.INVALID_TRANSACTION_TIMEOUT),
        id="zero-timeout",
    ),
    pytest.param(
        InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=900_001),
        5,
        refused(E.INVALID_TRANSACTION_TIMEOUT),
        id="timeout-above-transaction-max-timeout-ms",
    ),
    pytest.param(
        InitProducerIdRequest(transactional_id="", transaction_timeout_ms=60_000),
        5,
        refused(E.INVALID_REQUEST),
        id="empty-transactional-id",
    ),
    pytest.param(
        InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60_000, producer_id=5),
        3,
        refused(E.INVALID_REQUEST),
        id="v3-producer-id-without-epoch",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "granted"), INIT_PRODUCER_ID_CASES)
async def test_init_producer_id(
    broker: Broker, request_: InitProducerIdRequest, version: int, granted: bool | dict[str, Any]
) -> None:
    first = producer_id(await wire_call(broker, request_, version))
    second = producer_id(await wire_call(broker, request_, version))
    if granted is True:
        assert (first["error"], first["producer_epoch"], second["error"], second["producer_epoch"]) == (
            E.NONE,
            0,
            E.NONE,
            0,
        )
        # Fresh ids: never one the request names, never the same twice.
        assert first["producer_id"] >= 0
        assert second["producer_id"] not in (first["producer_id"], request_.producer_id)
        assert first["producer_id"] != request_.producer_id
    else:
        # As Kafka's error answer: NO_PRODUCER_ID and NO_PRODUCER_EPOCH.
        assert first == second == granted


# ---- FindCoordinator (v0-6) -------------------------------------------------------------------------------------
GROUP, TRANSACTION, SHARE = 0, 1, 2


def found(response: FindCoordinatorResponse) -> dict[str, Any]:
    return {
        "error": response.error_code,
        "error_message": response.error_message,
        "coordinator": (response.node_id, response.host, response.port),
        "coordinators": [(c.key, c.error_code, c.node_id, c.host, c.port) for c in response.coordinators],
        "messages": [c.error_message for c in response.coordinators],
    }


HERE = (NODE, "127.0.0.1", PORT)
NOWHERE = (-1, "", -1)

FIND_COORDINATOR_CASES = [
    pytest.param(
        FindCoordinatorRequest(key="g"),
        0,
        {"error": E.NONE, "coordinator": HERE},
        id="v0",
    ),
    pytest.param(
        FindCoordinatorRequest(key="g", key_type=GROUP),
        3,
        {"error": E.NONE, "error_message": "NONE", "coordinator": HERE, "coordinators": []},
        id="v3-group",
    ),
    pytest.param(
        FindCoordinatorRequest(key="tx", key_type=TRANSACTION),
        1,
        {"error": E.COORDINATOR_NOT_AVAILABLE, "coordinator": NOWHERE},
        id="v1-transaction-coordinator",
    ),
    pytest.param(
        FindCoordinatorRequest(key="share", key_type=SHARE),
        3,
        # Share groups' key type arrived in v6: before, a malformed request (Kafka 3.9.2 and 4.3.1).
        {"error": E.INVALID_REQUEST, "coordinator": NOWHERE},
        id="v3-share-coordinator",
    ),
    pytest.param(
        FindCoordinatorRequest(key_type=SHARE, coordinator_keys=["s"]),
        5,
        {"coordinators": [("s", E.INVALID_REQUEST, *NOWHERE)], "messages": [""]},
        id="v5-share-coordinator",
    ),
    pytest.param(
        FindCoordinatorRequest(key_type=9, coordinator_keys=["s"]),
        4,
        # Kafka refuses the whole request as malformed, with a message in each key's entry.
        {"coordinators": [("s", E.INVALID_REQUEST, *NOWHERE)]},
        id="v4-unknown-key-type",
    ),
    pytest.param(
        FindCoordinatorRequest(key="tx", key_type=TRANSACTION),
        0,
        {"error": E.NONE, "coordinator": HERE},
        id="v0-has-no-key-type",
    ),
    pytest.param(
        FindCoordinatorRequest(key_type=GROUP, coordinator_keys=["a", "b"]),
        4,
        {
            "error": E.NONE,
            "coordinator": (0, "", 0),
            "coordinators": [("a", E.NONE, *HERE), ("b", E.NONE, *HERE)],
            # From v4 a found coordinator's message is empty (Kafka 3.9.2 and 4.3.1, compat/test_response_diff.py).
            "messages": ["", ""],
        },
        id="v4-a-coordinator-per-key",
    ),
    pytest.param(
        FindCoordinatorRequest(key_type=TRANSACTION, coordinator_keys=["tx"]),
        6,
        # From v4 Kafka sends no message with any key's error.
        {"coordinators": [("tx", E.COORDINATOR_NOT_AVAILABLE, *NOWHERE)], "messages": [""]},
        id="v6-transaction-coordinator",
    ),
    pytest.param(
        FindCoordinatorRequest(key_type=SHARE, coordinator_keys=["s"]),
        6,
        # As Kafka 3.9.2 with share groups disabled (Kafka 4.3.1: INVALID_REQUEST, docs/kafka-differences.md).
        {"coordinators": [("s", E.COORDINATOR_NOT_AVAILABLE, *NOWHERE)], "messages": [""]},
        id="v6-share-coordinator",
    ),
    pytest.param(FindCoordinatorRequest(key_type=GROUP), 4, {"coordinators": []}, id="v4-no-keys"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), FIND_COORDINATOR_CASES)
async def test_find_coordinator(
    broker: Broker, request_: FindCoordinatorRequest, version: int, expected: dict[str, Any]
) -> None:
    await assert_answer(broker, request_, version, found, expected)


# ---- every handler has a table -------------------------------------------------------------------------------


@pytest.mark.parametrize("api_key", sorted(HANDLERS), ids=lambda key: key.name)
def test_every_registered_handler_has_a_table(api_key: ApiKey) -> None:
    """A handler registered without a table here fails (add its `<API>_CASES` and name its file in TABLES)."""
    assert api_key in TABLES
    module = importlib.import_module(f"tests.{Path(TABLES[api_key]).stem}")
    assert len(getattr(module, f"{api_key.name}_CASES")) >= 3
