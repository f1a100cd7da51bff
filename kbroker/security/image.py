"""The security part of the cluster metadata, as Kafka's ScramImage, AclsImage and ClientQuotasImage: SCRAM
credentials, ACLs and client quota configs. It lives in the metadata image (kbroker/metadata/image.py), so a single
node keeps it in its data directory and a cluster in etcd, and every node sees a change as soon as its image does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kbroker.security.acl import AclBinding
from kbroker.security.scram import ScramCredential

QuotaEntity = tuple[tuple[str, str | None], ...]
"""A client-quota entity: (entity type, name) pairs sorted by type; name None is the type's default entity."""


def quota_entity(pairs: Mapping[str, str | None]) -> QuotaEntity:
    return tuple(sorted(pairs.items()))


def quota_entity_key(entity: QuotaEntity) -> str:
    """A stable string for an entity (its key in etcd and in the single node's file)."""
    return json.dumps([[t, n] for t, n in entity], separators=(",", ":"))


def quota_entity_from_key(key: str) -> QuotaEntity:
    return tuple((str(t), None if n is None else str(n)) for t, n in json.loads(key))


@dataclass(frozen=True)
class SecurityImage:
    scram: Mapping[tuple[str, str], ScramCredential] = field(default_factory=dict)
    """(user, mechanism) -> credential."""
    acls: Mapping[str, AclBinding] = field(default_factory=dict)
    """ACL id -> binding (the id only tells two equal bindings' records apart in the store)."""
    client_quotas: Mapping[QuotaEntity, Mapping[str, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "scram": [
                {"user": user, "mechanism": mechanism, **credential.to_json()}
                for (user, mechanism), credential in sorted(self.scram.items())
            ],
            "acls": {acl_id: acl.to_json() for acl_id, acl in sorted(self.acls.items())},
            "client_quotas": {
                quota_entity_key(entity): dict(values) for entity, values in self.client_quotas.items()
            },
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SecurityImage:
        return cls(
            scram={
                (str(item["user"]), str(item["mechanism"])): ScramCredential.from_json(item)
                for item in obj.get("scram", [])
            },
            acls={str(k): AclBinding.from_json(v) for k, v in dict(obj.get("acls", {})).items()},
            client_quotas={
                quota_entity_from_key(k): {str(key): float(value) for key, value in dict(v).items()}
                for k, v in dict(obj.get("client_quotas", {})).items()
            },
        )


EMPTY_SECURITY = SecurityImage()


@dataclass(frozen=True)
class SecurityChange:
    """One atomic change of the security metadata (what one admin request asks for)."""

    scram_upserts: Mapping[tuple[str, str], ScramCredential] = field(default_factory=dict)
    scram_deletes: frozenset[tuple[str, str]] = frozenset()
    scram_only_if_absent: bool = False
    """Upsert only credentials not there yet (--add-scram at start: a first credential, not a reset)."""
    acl_creates: Mapping[str, AclBinding] = field(default_factory=dict)
    acl_deletes: frozenset[str] = frozenset()
    quota_changes: Mapping[QuotaEntity, Mapping[str, float | None]] = field(default_factory=dict)
    """Per entity, key -> new value, or None to remove the key."""

    def apply(self, image: SecurityImage) -> SecurityImage:
        scram = dict(image.scram)
        for key in self.scram_deletes:
            scram.pop(key, None)
        for key, credential in self.scram_upserts.items():
            if not (self.scram_only_if_absent and key in scram):
                scram[key] = credential
        acls = {k: v for k, v in image.acls.items() if k not in self.acl_deletes}
        acls.update(self.acl_creates)
        quotas = {entity: dict(values) for entity, values in image.client_quotas.items()}
        for entity, changes in self.quota_changes.items():
            values = quotas.setdefault(entity, {})
            for name, value in changes.items():
                if value is None:
                    values.pop(name, None)
                else:
                    values[name] = value
            if not values:
                del quotas[entity]
        return SecurityImage(scram, acls, quotas)
