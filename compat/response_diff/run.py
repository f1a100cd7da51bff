"""Sending a row to both brokers at every common version, and what came of it."""

from __future__ import annotations

import dataclasses
import pprint
import uuid
from dataclasses import dataclass, field
from typing import Any

from compat.response_diff.compare import Difference, differences, key_field, key_of, plain
from compat.response_diff.known import KNOWN, glob
from compat.response_diff.peer import Peer
from compat.response_diff.table import UNORDERED_BY_API, Row
from protocol.errors import ErrorCode
from protocol.messages import SCHEMAS
from protocol.messages.init_producer_id_response import InitProducerIdResponse
from protocol.messages.join_group_response import JoinGroupResponse
from protocol.primitives import ZERO_UUID


def common_versions(api_key: int, kbroker: Peer, kafka: Peer) -> range:
    """The versions of `api_key` both brokers advertise (empty if either lacks the API)."""
    if api_key not in kbroker.versions or api_key not in kafka.versions:
        return range(0)
    low = max(kbroker.versions[api_key][0], kafka.versions[api_key][0])
    high = min(kbroker.versions[api_key][1], kafka.versions[api_key][1])
    return range(low, high + 1)


@dataclass
class Exchange:
    """One version of a row: the request and the differences of the two answers, explained (by a known id) or not."""

    version: int
    request: Any
    unexplained: list[Difference] = field(default_factory=list)
    explained: list[tuple[Difference, str]] = field(default_factory=list)


@dataclass
class RowResult:
    api: str
    versions: range
    exchanges: list[Exchange]
    stale: list[str]
    """Known ids the row names that showed at none of its versions."""

    @property
    def failed(self) -> bool:
        return bool(self.stale) or any(e.unexplained for e in self.exchanges)


def run_row(row: Row, kbroker: Peer, kafka: Peer, release_major: int) -> RowResult:
    api_key = SCHEMAS[type(row.build(0, kbroker))].api_key
    api = SCHEMAS[type(row.build(0, kbroker))].name.removesuffix("Request")
    common = common_versions(api_key, kbroker, kafka)
    versions = range(max(common.start, row.since), min(common.stop, row.until + 1))
    known = [KNOWN[i] for i in row.known if release_major in KNOWN[i].releases]
    seen: set[str] = set()
    exchanges = []
    for version in versions:
        exchange = Exchange(version, row.build(version, kafka))
        answers = []
        for peer in (kbroker, kafka):
            response = peer.call(row.build(version, peer), version)
            peer.knows_ids(_uuids(response))
            _name_generated_ids(response, peer, f"{row.id} v{version}")
            tree = plain(response, peer)
            for path in (*UNORDERED_BY_API.get(api, ()), *row.unordered):
                tree = _sorted_list(tree, path.split("."))
            answers.append(tree)
        for difference in differences(*answers):
            if any(glob(path).fullmatch(difference.path) for path, _why in row.masked):
                continue
            match = next((k.id for k in known if k.matches(difference, version)), None)
            if match is None:
                exchange.unexplained.append(difference)
            else:
                exchange.explained.append((difference, match))
                seen.add(match)
        exchanges.append(exchange)
    stale = [k.id for k in known if k.id not in seen and set(versions) & set(k.versions)]
    return RowResult(api, versions, exchanges, stale)


NEW_MEMBER = (ErrorCode.NONE, ErrorCode.MEMBER_ID_REQUIRED)
"""JoinGroup answers that give a member id (any other echoes the one asked with)."""


def _name_generated_ids(response: Any, peer: Peer, label: str) -> None:
    """A member id JoinGroup generated, or a producer id InitProducerId gave, gets a stand-in naming the row and
    version that made it (the same on both brokers): the answer's other fields that name it (JoinGroup's leader)
    then compare equal exactly when they name the same one."""
    if isinstance(response, JoinGroupResponse) and response.error_code in NEW_MEMBER:
        peer.stand_ins.setdefault(response.member_id, f"<member joined by {label}>")
    if isinstance(response, InitProducerIdResponse) and response.producer_id >= 0:
        peer.stand_ins.setdefault(("producer_id", response.producer_id), f"<producer id given by {label}>")


def _uuids(value: Any) -> set[uuid.UUID]:
    out: set[uuid.UUID] = set()
    if isinstance(value, uuid.UUID):
        if value != ZERO_UUID:
            out.add(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            out |= _uuids(getattr(value, f.name))
    elif isinstance(value, list):
        for item in value:
            out |= _uuids(item)
    return out


def _sorted_list(tree: Any, path: list[str]) -> Any:
    """`tree` with the list at `path` (dict keys; `[]` steps into every item of a list) sorted by its items' key
    field (compare.LIST_KEYS), else their repr."""
    if not path:
        if not isinstance(tree, list):
            return tree
        key = key_field(tree)
        return sorted(tree, key=lambda item: key_of(item, key) if key is not None else repr(item))
    step, rest = path[0], path[1:]
    if step.endswith("[]"):
        step = step[:-2]
        if isinstance(tree, dict) and isinstance(tree.get(step), list):
            return {**tree, step: [_sorted_list(item, rest) for item in tree[step]]}
        return tree
    if isinstance(tree, dict) and step in tree:
        return {**tree, step: _sorted_list(tree[step], rest)}
    return tree


MAX_SHOWN = 40


def report(row: Row, result: RowResult, kafka_name: str) -> str:
    """What a failed row says: the request, then each difference's path with both values; versions that differ
    alike are reported together (with the request of the first)."""
    lines = [
        f"{result.api} row {row.id!r}: kbroker against {kafka_name} at versions {_span(result.versions)}"
    ]
    groups: dict[str, list[Exchange]] = {}
    for exchange in result.exchanges:
        if exchange.unexplained:
            groups.setdefault(repr(exchange.unexplained), []).append(exchange)
    for exchanges in groups.values():
        first = exchanges[0]
        versions = ", ".join(f"v{e.version}" for e in exchanges)
        lines.append(f"\n{result.api} {versions}; the request (as sent to {kafka_name} at v{first.version}):")
        lines.append(_indent(pprint.pformat(first.request, width=110, compact=True)))
        for difference in first.unexplained[:MAX_SHOWN]:
            lines.append(f"  {difference.path}:")
            lines.append(f"      kbroker: {_short(difference.kbroker)}")
            lines.append(f"      kafka:   {_short(difference.kafka)}")
        if len(first.unexplained) > MAX_SHOWN:
            lines.append(f"  ... and {len(first.unexplained) - MAX_SHOWN} more differences")
    for known_id in result.stale:
        lines.append(
            f"\nknown difference {known_id!r} ({KNOWN[known_id].says}) no longer shows in this row against "
            f"{kafka_name}: drop it from the row (and from docs/kafka-differences.md if no row names it)"
        )
    return "\n".join(lines)


def _span(versions: range) -> str:
    return f"{versions.start}-{versions.stop - 1}" if versions else "(none in common)"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _short(value: Any, limit: int = 600) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
