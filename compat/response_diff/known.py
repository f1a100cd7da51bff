"""The differences from Apache Kafka the table knows, each under a short id that docs/kafka-differences.md carries as
`diff:ID` next to its reason (compat/test_response_diff.py checks both ways).

A known difference matches a field difference by the path (a glob: `*` is any text) and, where given, by what
kbroker and Kafka answered there. A row allows only the ids it names, and fails when one of them no longer shows at
any version the row was sent at (against the Kafka releases the difference is listed for), so the list cannot rot.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compat.response_diff.compare import ABSENT, Difference

Check = Callable[[Any], bool]


def anything(_value: Any) -> bool:
    return True


def absent(value: Any) -> bool:
    return bool(value == ABSENT)


def present(value: Any) -> bool:
    return bool(value != ABSENT)


@dataclass(frozen=True)
class Known:
    id: str
    says: str
    """kbroker's answer against Kafka's, in one line (the reason is in docs/kafka-differences.md)."""
    paths: tuple[str, ...]
    kbroker: Check = anything
    kafka: Check = anything
    releases: tuple[int, ...] = (3, 4)
    """The major versions of Apache Kafka that answer otherwise than kbroker."""
    versions: range = range(1_000)
    """The versions of the request at which it shows."""

    def matches(self, difference: Difference, version: int) -> bool:
        return (
            version in self.versions
            and any(glob(path).fullmatch(difference.path) for path in self.paths)
            and self.kbroker(difference.kbroker)
            and self.kafka(difference.kafka)
        )


def glob(pattern: str) -> re.Pattern[str]:
    """A path pattern: `*` is any text, everything else itself."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


DYNAMIC_DEFAULT_BROKER_CONFIG = 3
DEFAULT_CONFIG = 5


def dynamic_default(value: Any) -> bool:
    """A config source (or a synonym or config entry) that is DYNAMIC_DEFAULT_BROKER_CONFIG."""
    if isinstance(value, dict):
        value = value.get("config_source", value.get("source"))
    return bool(value == DYNAMIC_DEFAULT_BROKER_CONFIG)


def is_(expected: Any) -> Check:
    return lambda value: bool(value == expected)


KNOWN: dict[str, Known] = {
    k.id: k
    for k in [
        Known(
            "apis-not-implemented",
            "ApiVersions lists only the APIs kbroker implements; Kafka lists many more",
            ("api_keys[*]",),
            kbroker=absent,
        ),
        Known(
            "kip-896-minimum-versions",
            "ApiVersions starts an API at Kafka 4.0's minimum version; Kafka 3.9 still has the older ones, and "
            "Kafka 4 Produce's v0-2",
            ("api_keys[*].min_version",),
            kbroker=lambda value: isinstance(value, int) and value > 0,
        ),
        Known(
            "offset-for-leader-epoch-v0",
            "OffsetForLeaderEpoch is advertised from v0; Kafka 4 from v2",
            ("api_keys[23].min_version",),
            kbroker=is_(0),
            releases=(4,),
        ),
        Known(
            "kafka-39-maximum-versions",
            "ApiVersions ends every API at Kafka 3.9's maximum version; Kafka 4 has newer ones",
            ("api_keys[*].max_version",),
            releases=(4,),
        ),
        Known(
            "features",
            "ApiVersions v3+ lists no supported or finalized features; Kafka lists its feature levels",
            ("supported_features[*]", "finalized_features[*]", "finalized_features_epoch"),
            kbroker=lambda value: value in (ABSENT, -1),
        ),
        Known(
            "group-config-operations",
            "a group's authorized operations are Kafka 3.9's (READ, DELETE, DESCRIBE); Kafka 4 adds "
            "DESCRIBE_CONFIGS and "
            "ALTER_CONFIGS (group configs, KIP-848)",
            ("groups[*].authorized_operations",),
            kbroker=is_(328),
            releases=(4,),
        ),
        Known(
            "auto-create",
            "an auto-created topic is described at once; Kafka answers UNKNOWN_TOPIC_OR_PARTITION meanwhile",
            ("topics[*].error_code", "topics[*].topic_id", "topics[*].partitions", "topics[*].partitions[*]"),
        ),
        Known(
            "fetch-error-offsets",
            "OFFSET_OUT_OF_RANGE carries the high watermark and log start offset; Kafka sends -1",
            (
                "responses[*].partitions[*].high_watermark",
                "responses[*].partitions[*].last_stable_offset",
                "responses[*].partitions[*].log_start_offset",
            ),
            kafka=is_(-1),
        ),
        Known(
            "follower-fetch-node-endpoints",
            "a follower's Fetch v16+ refused for leadership lists the leader's endpoint, as Kafka 3.9 does; Kafka 4 "
            "lists none in answers to followers",
            ("node_endpoints[*]",),
            kafka=absent,
            releases=(4,),
            versions=range(16, 1_000),
        ),
        Known(
            "record-errors",
            "INVALID_RECORD names no record (empty record_errors); Kafka lists each rejected record (KIP-467)",
            ("responses[*].partition_responses[*].record_errors[*]",),
            kbroker=absent,
        ),
        Known(
            "topic-configs-subset",
            "a topic's configs are those kbroker honours or was given; Kafka lists every topic config",
            ("results[*].configs[*]", "topics[*].configs[*]"),
            kbroker=absent,
        ),
        Known(
            "config-default-synonyms",
            "a config given at start-up lists no default synonym after the value given; Kafka lists the defaults "
            "of its synonyms too",
            ("results[*].configs[*].synonyms[*]",),
            kbroker=absent,
            kafka=lambda value: isinstance(value, dict) and value.get("source") == DEFAULT_CONFIG,
        ),
        Known(
            "topic-config-documentation",
            "a topic config's documentation is null; Kafka sends its text",
            ("results[*].configs[*].documentation",),
            kbroker=is_(None),
        ),
        Known(
            "broker-configs-subset",
            "a broker's configs are those kbroker has; Kafka lists all of its own",
            ("results[*].configs[*]",),
            kbroker=absent,
        ),
        Known(
            "kbroker-broker-configs",
            "kbroker's own broker configs (etcd, cluster name) are listed; Kafka has none of that name",
            ("results[*].configs[*]",),
            kafka=absent,
        ),
        Known(
            "static-broker-configs",
            "every broker config is read-only; Kafka can change some at run time",
            ("results[*].configs[*].read_only",),
            kbroker=is_(True),
            kafka=is_(False),
        ),
        Known(
            "no-dynamic-broker-configs",
            "no cluster-wide dynamic broker config exists; a Kafka 4 cluster is formatted with min.insync.replicas "
            "as one, which its topics show as their source and synonym",
            (
                "results[*].configs[*].config_source",
                "results[*].configs[*].synonyms[*]",
                "results[*].configs[*].synonyms[*].source",
                "results[*].configs[*]",
                "topics[*].configs[*].config_source",
            ),
            kbroker=lambda value: value in (ABSENT, 5),
            kafka=dynamic_default,
            releases=(4,),
        ),
        Known(
            "kafka-4-list-configs",
            "listeners and other list-valued broker configs have type STRING, as in Kafka 3.9; Kafka 4 says LIST",
            ("results[*].configs[*].config_type",),
            kbroker=is_(2),
            kafka=is_(7),
            releases=(4,),
        ),
        Known(
            "kafka-4-empty-list-defaults",
            "sasl.oauthbearer.expected.audience, an empty list by default, is null as in Kafka 3.9; Kafka 4 says ''",
            ("results[*].configs[sasl.oauthbearer.expected.audience].value",),
            kbroker=is_(None),
            kafka=is_(""),
            releases=(4,),
        ),
        Known(
            "assignment-while-rebalancing",
            "a member's assignment is empty while its group rebalances, as Kafka 3.9 answers; Kafka 4 keeps the "
            "last one",
            ("groups[*].members[*].member_assignment",),
            kbroker=is_(b""),
            releases=(4,),
        ),
        Known(
            "flush-interval-default",
            "log.flush.interval.ms defaults to 1000 (every log fsynced at least once a second); Kafka's to none",
            ("results[*].configs[log.flush.interval.ms].value",),
            kbroker=is_("1000"),
            kafka=is_(None),
        ),
        Known(
            "replica-fetch-default",
            "replica.fetch.max.bytes defaults to 8 MiB (a follower fsyncs each fetch round); Kafka's to 1 MiB",
            ("results[*].configs[replica.fetch.max.bytes].value",),
            kbroker=is_("8388608"),
            kafka=is_("1048576"),
        ),
        Known(
            "data-dir-default",
            "log.dir defaults to ./kbroker-data; Kafka's to /tmp/kafka-logs",
            ("results[*].configs[log.dir].value",),
        ),
        Known(
            "validate-only-topic-id",
            "CreateTopics v7 with validate_only answers the zero topic id; Kafka a random id that names nothing",
            ("topics[*].topic_id",),
            kbroker=is_("<zero uuid>"),
            versions=range(7, 1_000),
        ),
        Known(
            "offset-commit-v9-group-id-not-found",
            "OffsetCommit v9 from a member of a group that does not exist gets ILLEGAL_GENERATION, as Kafka 3.9 "
            "answers; Kafka 4's group coordinator (KIP-848) answers GROUP_ID_NOT_FOUND from v9",
            ("topics[*].partitions[*].error_code",),
            kbroker=is_("ILLEGAL_GENERATION (22)"),
            kafka=is_("GROUP_ID_NOT_FOUND (69)"),
            releases=(4,),
            versions=range(9, 1_000),
        ),
        Known(
            "share-group-coordinator",
            "FindCoordinator v6 for a share group gets COORDINATOR_NOT_AVAILABLE, as Kafka 3.9 answers with share "
            "groups disabled; Kafka 4 answers INVALID_REQUEST",
            ("coordinators[*].error_code",),
            kbroker=is_("COORDINATOR_NOT_AVAILABLE (15)"),
            kafka=is_("INVALID_REQUEST (42)"),
            releases=(4,),
            versions=range(6, 1_000),
        ),
        Known(
            "internal-topic-deletion",
            "DeleteTopics refuses __consumer_offsets with INVALID_REQUEST; Kafka deletes it",
            ("responses[__consumer_offsets].error_code", "responses[__consumer_offsets].topic_id"),
        ),
    ]
}
