"""The authorizer every handler asks, through `RequestContext.authorize` (kbroker/handlers/registry.py).

`authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer` (or Kafka's older
`kafka.security.authorizer.AclAuthorizer` name) turns enforcement on: `AclAuthorizer` keeps an index of the ACLs of
the latest metadata image (rebuilt when they change) and decides with StandardAuthorizer's rules (acl.py). Without
it every action is allowed, and authorized-operation fields list every operation, as Kafka without an authorizer.
"""

from __future__ import annotations

from typing import Protocol

from kbroker.common import ConfigError
from kbroker.metadata.image import MetadataImage
from kbroker.security.acl import SUPPORTED_OPERATIONS, AclIndex, AclOperation, ResourceType

AUTHORIZER_CLASSES = frozenset(
    {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
    }
)


class Authorizer(Protocol):
    @property
    def enabled(self) -> bool: ...

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool: ...

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool: ...

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str
    ) -> int: ...


class AllowAll:
    """No authorizer configured."""

    enabled = False

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        return True

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        return True

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        bits = 0
        for op in SUPPORTED_OPERATIONS.get(resource_type, ()):
            bits |= 1 << op
        return bits


class AclAuthorizer:
    """StandardAuthorizer's decisions over the ACLs of the current metadata image."""

    enabled = True

    def __init__(self, super_users: tuple[str, ...], allow_everyone_if_no_acl_found: bool) -> None:
        self._super_users = super_users
        self._allow_everyone = allow_everyone_if_no_acl_found
        self._acls: object = None
        self._index = AclIndex((), super_users, allow_everyone_if_no_acl_found)

    def on_metadata(self, image: MetadataImage) -> None:
        acls = image.security.acls
        if acls is not self._acls:
            self._acls = acls
            self._index = AclIndex(acls.values(), self._super_users, self._allow_everyone)

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        return self._index.authorize(principal, host, operation, resource_type, name)

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        return self._index.authorize_by_resource_type(principal, host, operation, resource_type)

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        return self._index.authorized_operations(principal, host, resource_type, name)


def build_authorizer(
    class_name: str, super_users: tuple[str, ...], allow_everyone: bool
) -> AllowAll | AclAuthorizer:
    if not class_name:
        return AllowAll()
    if class_name not in AUTHORIZER_CLASSES:
        raise ConfigError(
            f"authorizer.class.name={class_name}: kbroker's authorizer implements "
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
        )
    return AclAuthorizer(super_users, allow_everyone)
