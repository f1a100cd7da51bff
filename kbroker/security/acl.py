"""ACLs with the semantics of Kafka's StandardAuthorizer, as plain data and pure functions (no I/O, no trio).

An `AclBinding` says: PRINCIPAL from HOST is ALLOWed (or DENYed) OPERATION on resources of a type whose name is NAME
(LITERAL; "*" is every name) or starts with NAME (PREFIXED). `AclIndex.authorize` decides one action as Kafka does:

1. a super user may do anything;
2. the ACLs of the resource are those of its type whose pattern matches its name (literal, wildcard, prefixed);
   of those, the ones for the principal (or `User:*`) and the host (or `*`) apply;
3. an applying DENY for the operation (or ALL) denies, whatever allows it;
4. else an applying ALLOW for the operation, for ALL, or for an operation implying it (READ, WRITE, DELETE and ALTER
   imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) allows;
5. else, if the resource has any ACL at all (for anyone), it is denied; with none, `allow.everyone.if.no.acl.found`
   decides.

`AclBindingFilter` is the filter of DescribeAcls and DeleteAcls (ANY and MATCH patterns, null fields match all).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kbroker.common import KafkaError
from kbroker.security.principal import KafkaPrincipal
from protocol.errors import ErrorCode

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


Op = AclOperation
_IMPLIES_DESCRIBE = frozenset({Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS})

# The operations each resource type has (what authorized-operations bit fields report), as Kafka lists them.
SUPPORTED_OPERATIONS: Mapping[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (Op.READ, Op.DESCRIBE, Op.DELETE),
    ResourceType.CLUSTER: (
        Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER,
        Op.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (Op.DESCRIBE, Op.WRITE),
    ResourceType.DELEGATION_TOKEN: (Op.DESCRIBE,),
    ResourceType.USER: (Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def to_json(self) -> dict[str, object]:
        return {
            "resource_type": int(self.resource_type),
            "resource_name": self.resource_name,
            "pattern_type": int(self.pattern_type),
            "principal": self.principal,
            "host": self.host,
            "operation": int(self.operation),
            "permission_type": int(self.permission_type),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> AclBinding:
        def number(key: str) -> int:
            value = obj[key]
            assert isinstance(value, int), key
            return value

        return cls(
            ResourceType(number("resource_type")),
            str(obj["resource_name"]),
            PatternType(number("pattern_type")),
            str(obj["principal"]),
            str(obj["host"]),
            AclOperation(number("operation")),
            AclPermissionType(number("permission_type")),
        )


def validate_new_acl(
    resource_type: int,
    name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission: int,
) -> AclBinding:
    """A CreateAcls creation as a binding, or KafkaError(INVALID_REQUEST) saying what is wrong with it."""

    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    try:
        rtype, ptype = ResourceType(resource_type), PatternType(pattern_type)
        op, perm = AclOperation(operation), AclPermissionType(permission)
    except ValueError as exc:
        raise invalid(f"Invalid ACL: {exc}") from None
    if rtype in (ResourceType.ANY, ResourceType.UNKNOWN):
        raise invalid(f"Invalid resourceType {rtype.name}")
    if ptype not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise invalid(f"Invalid patternType {ptype.name}")
    if op in (AclOperation.ANY, AclOperation.UNKNOWN):
        raise invalid(f"Invalid operation {op.name}")
    if perm not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise invalid(f"Invalid permissionType {perm.name}")
    if not name:
        raise invalid("Resource name should not be empty")
    try:
        KafkaPrincipal.parse(principal)
    except ValueError as exc:
        raise invalid(str(exc)) from None
    return AclBinding(rtype, name, ptype, principal, host, op, perm)


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission_type: int

    def check(self) -> str | None:
        """Why the filter cannot be used (None: it can)."""
        for enum_type, value, field in (
            (ResourceType, self.resource_type, "resource type"),
            (PatternType, self.pattern_type, "pattern type"),
            (AclOperation, self.operation, "operation"),
            (AclPermissionType, self.permission_type, "permission type"),
        ):
            if value not in enum_type.__members__.values() or value == 0:
                return f"Invalid {field} {value}"
        return None

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if not self._pattern_matches(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation != AclOperation.ANY and acl.operation != self.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or acl.permission_type == self.permission_type

    def _pattern_matches(self, acl: AclBinding) -> bool:
        name = self.resource_name
        if self.pattern_type == PatternType.MATCH:
            if name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.resource_name in (name, WILDCARD)
            return name.startswith(acl.resource_name)
        if self.pattern_type != PatternType.ANY and acl.pattern_type != self.pattern_type:
            return False
        return name is None or acl.resource_name == name


class AclIndex:
    """Every ACL, indexed for authorization; rebuilt from the metadata image when its ACLs change."""

    def __init__(
        self, acls: Iterable[AclBinding], super_users: Iterable[str], allow_everyone_if_no_acl_found: bool
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_everyone = allow_everyone_if_no_acl_found
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefixed: dict[ResourceType, list[AclBinding]] = {}
        self._by_type: dict[ResourceType, list[AclBinding]] = {}
        for acl in acls:
            self._by_type.setdefault(acl.resource_type, []).append(acl)
            if acl.pattern_type == PatternType.LITERAL:
                self._literal.setdefault((acl.resource_type, acl.resource_name), []).append(acl)
            else:
                self._prefixed.setdefault(acl.resource_type, []).append(acl)

    def _resource_acls(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        found = list(self._literal.get((resource_type, name), ()))
        if name != WILDCARD:
            found += self._literal.get((resource_type, WILDCARD), ())
        found += [a for a in self._prefixed.get(resource_type, ()) if name.startswith(a.resource_name)]
        return found

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if principal in self.super_users:
            return True
        acls = self._resource_acls(resource_type, name)
        allowed = False
        for acl in acls:
            if not _applies(acl, principal, host):
                continue
            if acl.permission_type == AclPermissionType.DENY:
                if acl.operation in (Op.ALL, operation):
                    return False
            elif _allows(acl.operation, operation):
                allowed = True
        if allowed:
            return True
        return not acls and self.allow_everyone

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether the principal may do `operation` on at least one resource of the type (Kafka's
        authorizeByResourceType, as InitProducerId uses it for WRITE on any topic): an ALLOW for it that no DENY of
        the same or a wider pattern cancels."""
        if principal in self.super_users:
            return True
        acls = [a for a in self._by_type.get(resource_type, ()) if _applies(a, principal, host)]
        denies = [
            a
            for a in acls
            if a.permission_type == AclPermissionType.DENY and a.operation in (Op.ALL, operation)
        ]
        if any(a.pattern_type == PatternType.LITERAL and a.resource_name == WILDCARD for a in denies):
            return False
        for acl in acls:
            if acl.permission_type != AclPermissionType.ALLOW or acl.operation not in (Op.ALL, operation):
                continue
            if not any(_covers(deny, acl) for deny in denies):
                return True
        return not self._by_type.get(resource_type) and self.allow_everyone

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """The bit field of operations allowed on the resource (bit n set: AclOperation n is allowed)."""
        bits = 0
        for op in SUPPORTED_OPERATIONS.get(resource_type, ()):
            if self.authorize(principal, host, op, resource_type, name):
                bits |= 1 << op
        return bits


def _applies(acl: AclBinding, principal: str, host: str) -> bool:
    return acl.principal in (principal, WILDCARD_PRINCIPAL) and acl.host in (host, WILDCARD)


def _allows(granted: AclOperation, wanted: AclOperation) -> bool:
    if granted in (Op.ALL, wanted):
        return True
    if wanted == Op.DESCRIBE:
        return granted in _IMPLIES_DESCRIBE
    if wanted == Op.DESCRIBE_CONFIGS:
        return granted in _IMPLIES_DESCRIBE_CONFIGS
    return False


def _covers(deny: AclBinding, allow: AclBinding) -> bool:
    """Whether the DENY pattern covers every resource the ALLOW pattern names."""
    if deny.pattern_type == PatternType.LITERAL:
        return deny.resource_name in (WILDCARD, allow.resource_name) and (
            deny.resource_name == WILDCARD or allow.pattern_type == PatternType.LITERAL
        )
    return allow.resource_name.startswith(deny.resource_name)
