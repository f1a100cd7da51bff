"""One broker of the comparison: a raw connection through our own codec, and what the masks need to know of it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from protocol.errors import ProtocolError
from protocol.messages import SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.metadata_request import MetadataRequest
from protocol.primitives import ZERO_UUID
from tests.test_groups_support import Wire

UNKNOWN_TOPIC_ID = uuid.UUID("0badc0de-0000-4000-8000-000000000001")
"""A topic id no broker gave any topic."""

CLIENT_ID = "rd-client"
# Every request of the table is answered at once (fetches wait 0 ms); a broker that does not answer in this time
# gets "<no answer>" as its response, which differs from any real answer.
REQUEST_TIMEOUT_S = 15.0
NO_ANSWER = "<no answer within 15 s>"
CLOSED = "<connection closed>"
NOT_DECODED = "<response did not decode>"
# A topic created a moment ago is in a KRaft broker's metadata once the broker has replayed its record (within
# milliseconds); an id still unknown after this names no topic (Kafka's answer to a validate_only CreateTopics).
NEW_TOPIC_ID_WAIT_S = 3.0


class Peer:
    """A broker answering the table's requests: `call(request, version)`; `stand_ins` maps what it generated (topic
    ids, member ids, and producer ids as ("producer_id", id)) to names, `port` and `cluster_id` are what the masks
    compare against."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        self.bootstrap = bootstrap
        self.port = int(bootstrap.rpartition(":")[2])
        self.cluster_id: str | None = None
        self.stand_ins: dict[object, str] = {UNKNOWN_TOPIC_ID: "<the id of no topic>"}
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.members: dict[str, tuple[str, int]] = {}
        """group -> (member id, generation) of the member the world's setup joined first."""
        self.versions: dict[int, tuple[int, int]] = {}
        self._wire: Wire | None = None

    def connect(self) -> Wire:
        """A new connection of its own (for a request whose answer is left pending)."""
        wire = Wire(self.bootstrap, client_id=CLIENT_ID)
        wire.sock.settimeout(REQUEST_TIMEOUT_S)
        return wire

    def call(self, request: Any, version: int) -> Any:
        """The decoded response, or NO_ANSWER / CLOSED / NOT_DECODED (the connection is then opened afresh)."""
        if self._wire is None:
            self._wire = self.connect()
        try:
            return self._wire.call(request, version)
        except TimeoutError:
            outcome = NO_ANSWER
        except (ConnectionError, OSError):
            outcome = CLOSED
        except (ProtocolError, AssertionError):
            outcome = NOT_DECODED
        self.close()
        return outcome

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()
            self._wire = None

    def learn_versions(self) -> None:
        response = self.call(ApiVersionsRequest(client_software_name="rd", client_software_version="1"), 3)
        assert response.error_code == 0, f"{self.name}: ApiVersions error {response.error_code}"
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}

    def max_version(self, request_class: type) -> int:
        return self.versions[SCHEMAS[request_class].api_key][1]

    def learn_topics(self) -> None:
        """Every topic's id and the cluster id, from Metadata."""
        response = self.call(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)  # type: ignore[arg-type]
        self.cluster_id = response.cluster_id
        for topic in response.topics:
            if topic.topic_id != ZERO_UUID:
                self.topic_ids[topic.name] = topic.topic_id
                self.stand_ins[topic.topic_id] = f"<id of topic {topic.name}>"

    def knows_ids(self, ids: set[uuid.UUID]) -> bool:
        """Whether every id in `ids` has a stand-in, after asking Metadata again for the ones that do not (a topic
        a row has just created)."""
        deadline = time.monotonic() + NEW_TOPIC_ID_WAIT_S
        while not ids <= self.stand_ins.keys():
            if time.monotonic() > deadline:
                return False
            self.learn_topics()
            time.sleep(0.05)
        return True

    def topic_id(self, name: str) -> uuid.UUID:
        """The id this broker gave `name`, or a random id (no broker has it) for a topic it does not have."""
        if name not in self.topic_ids:
            self.learn_topics()
        return self.topic_ids.get(name, UNKNOWN_TOPIC_ID)
