"""The web console's JSON API (under /api/ on the admin listener).

What this broker knows itself is read in process, on the trio thread: the cluster's metadata (brokers, topics,
leaders, ISR, configs) and the sizes of the logs it holds. Everything that lives on other brokers of a cluster
(offsets at the leaders, the groups at their coordinators, records) is asked over Kafka's protocol, through the same
blocking client as `kbroker topic` (kbroker/tools/session.py), in a worker thread, against this broker's own
advertised address: the console sees what any client sees.

    GET    /api/cluster                          brokers, controller, counts
    GET    /api/topics                           every topic: partitions, replicas, under-replicated, local size
    POST   /api/topics                           {"name", "partitions", "replication_factor", "configs"}
    GET    /api/topics/NAME                      partitions (leader, ISR, offsets, local size) and configs
    DELETE /api/topics/NAME
    GET    /api/topics/NAME/messages?partition=P&offset=O|time=T&limit=N
    POST   /api/topics/NAME/messages             {"partition"?, "key"?, "value", "headers"?: {k: v}}
    GET    /api/groups                           every group of every broker
    GET    /api/groups/ID                        members, assignments, committed offsets and lag
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote

import trio

from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from kbroker.monitoring.collector import BrokerState
from kbroker.tools.formats import parse_time_ms, partition_for_key
from kbroker.tools.session import EARLIEST, LATEST, KafkaSession, Message, ToolError

T = TypeVar("T")
MAX_MESSAGES = 500
SOURCES = {1: "topic", 4: "broker setting", 5: "default"}


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _bytes(data: bytes | None) -> dict[str, Any] | None:
    """A key, value or header as the console shows it: text if it is UTF-8, and always base64 (for hex)."""
    if data is None:
        return None
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"text": text, "base64": base64.b64encode(data).decode(), "size": len(data)}


def _message(m: Message) -> dict[str, Any]:
    return {
        "partition": m.partition,
        "offset": m.offset,
        "timestamp": m.timestamp,
        "key": _bytes(m.key),
        "value": _bytes(m.value),
        "headers": [[k, _bytes(v)] for k, v in m.headers],
    }


class ConsoleApi:
    def __init__(self, state: BrokerState, config: BrokerConfig, bootstrap: Callable[[], str]) -> None:
        self.state = state
        self.config = config
        self.bootstrap = bootstrap

    async def _kafka(self, work: Callable[[KafkaSession], T]) -> T:
        def run() -> T:
            with KafkaSession(self.bootstrap(), client_id="kbroker-console") as kafka:
                return work(kafka)

        try:
            return await trio.to_thread.run_sync(run)
        except ToolError as exc:
            raise ApiError(400, str(exc)) from None

    async def handle(self, method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        try:
            return await self._route(method, path, query, body)
        except (ValueError, TypeError) as exc:
            # a field of the wrong type in a request body: the caller's mistake, said as such
            raise ApiError(400, f"bad request: {exc}") from None

    async def _route(self, method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.removeprefix("/api/").split("/") if p]
        match (method, parts):
            case ("GET", ["cluster"]):
                return 200, self.cluster()
            case ("GET", ["topics"]):
                return 200, self.topics()
            case ("POST", ["topics"]):
                return 200, await self.create_topic(_body(body))
            case ("GET", ["topics", name]):
                return 200, await self.topic(name)
            case ("DELETE", ["topics", name]):
                await self._kafka(lambda k: k.delete_topic(name))
                return 200, {"deleted": name}
            case ("GET", ["topics", name, "messages"]):
                return 200, await self.messages(name, query)
            case ("POST", ["topics", name, "messages"]):
                return 200, await self.produce(name, _body(body))
            case ("GET", ["groups"]):
                groups = await self._kafka(lambda k: k.list_groups())
                return 200, [
                    {"group": g, "state": s, "protocol_type": t, "coordinator": c} for g, s, t, c in groups
                ]
            case ("GET", ["groups", group]):
                return 200, await self.group(group)
        raise ApiError(404, f"no API {method} {path}")

    # ---- in process ------------------------------------------------------------------------------------------

    def _local_size(self, topic: str, partition: int) -> int | None:
        p = self.state.replicas.partitions.get(TopicPartition(topic, partition))
        return None if p is None or p.log.closed else p.log.size_in_bytes

    def cluster(self) -> dict[str, Any]:
        image = self.state.metadata.image()
        partitions = sum(len(states) for states in image.partitions.values())
        under = sum(
            1 for states in image.partitions.values() for s in states.values() if len(s.isr) < len(s.replicas)
        )
        return {
            "cluster_id": image.cluster_id,
            "node_id": self.state.node_id,
            "mode": "cluster" if self.state.cluster_mode else "single node",
            "controller": image.controller_id,
            "brokers": [
                {"id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
                for b in sorted(image.brokers.values(), key=lambda b: b.node_id)
            ],
            "topics": len(image.topics),
            "partitions": partitions,
            "under_replicated": under,
            "offline": sum(
                1 for t, states in image.partitions.items() for i in states if image.live_leader(t, i) < 0
            ),
        }

    def topics(self) -> list[dict[str, Any]]:
        image = self.state.metadata.image()
        out = []
        for name in sorted(image.topics):
            topic = image.topics[name]
            states = image.partitions.get(name, {})
            sizes = [self._local_size(name, i) for i in states]
            out.append({
                "name": name,
                "internal": topic.is_internal,
                "partitions": topic.num_partitions,
                "replication_factor": topic.replication_factor,
                "under_replicated": sum(1 for s in states.values() if len(s.isr) < len(s.replicas)),
                "offline": sum(1 for i in states if image.live_leader(name, i) < 0),
                "local_bytes": sum(s for s in sizes if s is not None),
            })  # fmt: skip
        return out

    # ---- over the wire ---------------------------------------------------------------------------------------

    async def topic(self, name: str) -> dict[str, Any]:
        image = self.state.metadata.image()
        topic = image.topics.get(name)
        if topic is None:
            raise ApiError(404, f"no topic {name}")
        indexes = sorted(image.partitions.get(name, {}))

        def offsets(kafka: KafkaSession) -> tuple[dict[int, int], dict[int, int]]:
            return kafka.list_offsets(name, indexes, EARLIEST), kafka.list_offsets(name, indexes, LATEST)

        try:
            starts, ends = await self._kafka(offsets)
        except ApiError:
            starts, ends = {}, {}
        partitions = []
        for index in indexes:
            state = image.partitions[name][index]
            partitions.append({
                "partition": index,
                "leader": image.live_leader(name, index),
                "leader_epoch": state.leader_epoch,
                "replicas": list(state.replicas),
                "isr": list(state.isr),
                "log_start_offset": starts.get(index),
                "high_watermark": ends.get(index),
                "local_bytes": self._local_size(name, index),
            })  # fmt: skip
        configs = [
            {"name": k, "value": v, "source": SOURCES.get(src, str(src))}
            for k, v, src in self.config.describe_topic_configs(topic.configs)
        ]
        return {
            "name": name,
            "topic_id": str(topic.topic_id),
            "internal": topic.is_internal,
            "replication_factor": topic.replication_factor,
            "partitions": partitions,
            "configs": configs,
        }

    async def create_topic(self, body: dict[str, Any]) -> dict[str, Any]:
        name = _field(body, "name", str)
        partitions = int(body.get("partitions") or -1)
        replication = int(body.get("replication_factor") or -1)
        configs = {str(k): str(v) for k, v in dict(body.get("configs") or {}).items()}
        await self._kafka(lambda k: k.create_topic(name, partitions, replication, configs))
        return {"created": name}

    async def messages(self, name: str, query: dict[str, str]) -> dict[str, Any]:
        try:
            partition = int(query.get("partition", "0"))
            limit = max(1, min(int(query.get("limit", "50")), MAX_MESSAGES))
            offset = int(query["offset"]) if query.get("offset") else None
            when = parse_time_ms(query["time"]) if query.get("time") else None
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None

        def read(kafka: KafkaSession) -> dict[str, Any]:
            start = offset
            if start is None and when is not None:
                start = kafka.list_offsets(name, [partition], when)[partition]
                if start < 0:
                    start = kafka.list_offsets(name, [partition], LATEST)[partition]
            if start is None:
                start = kafka.list_offsets(name, [partition], EARLIEST)[partition]
            found: list[Message] = []
            position, high_watermark = start, -1
            while len(found) < limit:
                batch, high_watermark = kafka.fetch(name, partition, position)
                if not batch:
                    break
                found.extend(batch)
                position = batch[-1].offset + 1
            return {
                "partition": partition,
                "start": start,
                "high_watermark": high_watermark,
                "messages": [_message(m) for m in found[:limit]],
            }

        return await self._kafka(read)

    async def produce(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        key = body.get("key")
        value = body.get("value")
        headers = tuple((str(k), str(v).encode()) for k, v in dict(body.get("headers") or {}).items())
        key_bytes = None if key in (None, "") else str(key).encode()
        value_bytes = None if value is None else str(value).encode()
        image = self.state.metadata.image()
        topic = image.topics.get(name)
        if topic is None:
            raise ApiError(404, f"no topic {name}")
        if body.get("partition") not in (None, ""):
            partition = int(body["partition"])
        elif key_bytes is not None:
            partition = partition_for_key(key_bytes, topic.num_partitions)
        else:
            partition = 0
        offset = await self._kafka(lambda k: k.produce(name, partition, [(key_bytes, value_bytes, headers)]))
        return {"partition": partition, "offset": offset}

    async def group(self, group: str) -> dict[str, Any]:
        info, lags = await self._kafka(lambda k: k.lag(group))
        return {
            "group": info.group_id,
            "state": info.state,
            "protocol_type": info.protocol_type,
            "protocol": info.protocol,
            "coordinator": info.coordinator,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "host": m.client_host,
                    "assignment": [[t, p] for t, p in m.assignment],
                }
                for m in info.members
            ],
            "partitions": [
                {
                    "topic": lag.topic,
                    "partition": lag.partition,
                    "committed": lag.committed,
                    "log_end": lag.log_end,
                    "lag": lag.lag,
                    "member_id": lag.member_id,
                }
                for lag in lags
            ],
            "total_lag": sum(lag.lag or 0 for lag in lags),
        }


def _body(body: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(body or b"{}")
    except ValueError:
        raise ApiError(400, "the body must be a JSON object") from None
    if not isinstance(obj, dict):
        raise ApiError(400, "the body must be a JSON object")
    return obj


def _field(body: dict[str, Any], name: str, kind: type[T]) -> T:
    value = body.get(name)
    if not isinstance(value, kind) or value == "":
        raise ApiError(400, f"{name} is required")
    return value
