"""A 3-node cluster whose brokers replicate over a SASL_SSL inter-broker listener (SCRAM-SHA-512, TLS with host name
checks), with the authorizer on: replication works only if followers log in to their leaders as a super user; SCRAM
credentials and ACLs created through one node take effect on the others (they live in etcd); transactions commit
across the nodes with a client's ACLs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from protocol.errors import ErrorCode
from protocol.messages.alter_user_scram_credentials_request import (
    AlterUserScramCredentialsRequest,
    ScramCredentialUpsertion,
)
from protocol.messages.create_acls_request import AclCreation, CreateAclsRequest
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from tests.cluster_fixture import Cluster
from tests.etcd_process import running_etcd
from tests.security_support import (
    PASSWORDS,
    Pki,
    SaslFailed,
    make_pki,
    sasl_login,
    secure_wire,
    tls_client_context,
)

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

SCRAM_ADMIN_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="admin" password="admin-secret";'
)


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


@pytest.fixture
def cluster(tmp_path: Path, pki: Pki, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    overrides = {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
        "inter.broker.listener.name": "SASL_SSL",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_ADMIN_JAAS,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        # admin: the brokers themselves and the test's administrator; ANONYMOUS: the harness's own PLAINTEXT probes
        "super.users": "User:admin;User:ANONYMOUS",
        "default.replication.factor": "3",
        "offsets.topic.replication.factor": "3",
    }
    with running_etcd() as etcd:
        c = Cluster(
            tmp_path / "cluster",
            etcd,
            3,
            overrides,
            request,
            extra_listeners=("SASL_SSL",),
            extra_args=["--add-scram", f"SCRAM-SHA-512=[name=admin,password={PASSWORDS['admin']}]"],
        )
        try:
            c.start()
            yield c
        finally:
            c.stop()


def test_replication_over_sasl_ssl_and_security_metadata_everywhere(cluster: Cluster, pki: Pki) -> None:
    cluster.create_topic("secured", partitions=3, replication_factor=3, configs={"min.insync.replicas": "3"})
    nodes = [cluster.node(i) for i in (1, 2, 3)]
    # acks=all with min.insync.replicas=3 succeeds only once both followers of every partition have fetched the
    # records over the SASL_SSL listener (a follower that cannot log in would leave the ISR, and then this fails).
    producer = Producer(
        {
            "bootstrap.servers": ",".join(n.bootstrap_of("SASL_SSL") for n in nodes),
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(pki.ca),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "admin",
            "sasl.password": PASSWORDS["admin"],
            "acks": "all",
        }
    )
    errors: list[object] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            errors.append(error)

    for i in range(300):
        producer.produce("secured", value=b"%d" % i, partition=i % 3, on_delivery=delivered)
    assert producer.flush(60) == 0
    assert errors == []
    for p in range(3):
        assert sorted(cluster.partition("secured", p).isr) == [1, 2, 3]

    # A user created through node 1 logs in on node 3; an ACL created through node 2 lets it see the topic on node 3.
    tls = tls_client_context(pki)
    with secure_wire(nodes[0].bootstrap_of("SASL_SSL"), tls) as wire:
        sasl_login(wire, "SCRAM-SHA-512", "admin", PASSWORDS["admin"])
        upsert = ScramCredentialUpsertion(
            name="carol",
            mechanism=2,
            iterations=4096,
            salt=b"0123456789abcdef",
            salted_password=_salted("carol-pw"),
        )
        answer = wire.call(AlterUserScramCredentialsRequest(upsertions=[upsert]), 0)
        assert [r.error_code for r in answer.results] == [ErrorCode.NONE]
    deadline = time.monotonic() + 20
    while True:
        try:
            with secure_wire(nodes[2].bootstrap_of("SASL_SSL"), tls) as wire:
                sasl_login(wire, "SCRAM-SHA-512", "carol", "carol-pw")
                topic = wire.call(MetadataRequest(topics=[MetadataRequestTopic(name="secured")]), 12).topics[
                    0
                ]
                assert topic.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
                break
        except SaslFailed:
            assert time.monotonic() < deadline, "the credential made on node 1 never reached node 3"
            time.sleep(0.2)
    with secure_wire(nodes[1].bootstrap_of("SASL_SSL"), tls) as wire:
        sasl_login(wire, "SCRAM-SHA-512", "admin", PASSWORDS["admin"])
        acl = AclCreation(resource_type=2, resource_name="secured", resource_pattern_type=3, principal="User:carol",
                          host="*", operation=8, permission_type=3)  # fmt: skip
        assert [r.error_code for r in wire.call(CreateAclsRequest(creations=[acl]), 3).results] == [
            ErrorCode.NONE
        ]
    with secure_wire(nodes[2].bootstrap_of("SASL_SSL"), tls) as wire:
        sasl_login(wire, "SCRAM-SHA-512", "carol", "carol-pw")
        while (
            wire.call(MetadataRequest(topics=[MetadataRequestTopic(name="secured")]), 12).topics[0].error_code
        ):
            assert time.monotonic() < deadline, "the ACL made on node 2 never reached node 3"
            time.sleep(0.2)


def _salted(password: str) -> bytes:
    """What kafka-configs computes and sends: Hi(password, salt, 4096) with SHA-512 (RFC 5802)."""
    import hashlib

    return hashlib.pbkdf2_hmac("sha512", password.encode(), b"0123456789abcdef", 4096)


def test_transactions_commit_across_nodes_with_acls(cluster: Cluster, pki: Pki) -> None:
    """With the authorizer on, a transactional producer holding only its own ACLs commits records on partitions led
    by every node, and a group's offsets: the coordinator's WriteTxnMarkers to the other leaders and the leaders'
    KIP-890 checks (AddPartitionsToTxn v4) go between the nodes as the inter-broker principal, a super user, which
    Kafka's checks (CLUSTER_ACTION) let through. A node that refused them would leave the records unreadable at
    read_committed (no marker) or the produce failing (no verification)."""
    cluster.create_topic("txn-out", partitions=3, replication_factor=3)
    cluster.create_topic("txn-in", partitions=1, replication_factor=3)
    nodes = [cluster.node(i) for i in (1, 2, 3)]
    tls = tls_client_context(pki)
    acls = [
        (5, "txn-carol", 4),
        (2, "txn-out", 4),
        (2, "txn-in", 3),
        (3, "txn-g", 3),
    ]  # (type, name, operation)
    with secure_wire(nodes[0].bootstrap_of("SASL_SSL"), tls) as wire:
        sasl_login(wire, "SCRAM-SHA-512", "admin", PASSWORDS["admin"])
        upsert = ScramCredentialUpsertion(name="carol", mechanism=2, iterations=4096, salt=b"0123456789abcdef",
                                          salted_password=_salted("carol-pw"))  # fmt: skip
        assert wire.call(AlterUserScramCredentialsRequest(upsertions=[upsert]), 0).results[0].error_code == 0
        creations = [
            AclCreation(resource_type=t, resource_name=n, resource_pattern_type=3, principal="User:carol", host="*",
                        operation=op, permission_type=3)
            for t, n, op in acls
        ]  # fmt: skip
        assert [r.error_code for r in wire.call(CreateAclsRequest(creations=creations), 3).results] == [0] * 4
        coordinator = wire.call(FindCoordinatorRequest(key_type=1, coordinator_keys=["txn-carol"]), 4)
    deadline = time.monotonic() + 30
    for node in nodes:  # every node has the credential and the ACLs (through etcd) before the client starts
        while True:
            try:
                with secure_wire(node.bootstrap_of("SASL_SSL"), tls) as wire:
                    sasl_login(wire, "SCRAM-SHA-512", "carol", "carol-pw")
                    found = wire.call(FindCoordinatorRequest(key_type=1, coordinator_keys=["txn-carol"]), 4)
                    if found.coordinators[0].error_code != ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                        break
            except SaslFailed:
                pass
            assert time.monotonic() < deadline, (
                f"carol's credential or ACLs never reached node {node.node_id}"
            )
            time.sleep(0.2)

    def client(user: str, password: str, **settings: object) -> dict[str, object]:
        return {"bootstrap.servers": ",".join(n.bootstrap_of("SASL_SSL") for n in nodes),
                "security.protocol": "SASL_SSL", "ssl.ca.location": str(pki.ca), "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": user, "sasl.password": password, **settings}  # fmt: skip

    producer = Producer(client("carol", "carol-pw", **{"transactional.id": "txn-carol"}))
    producer.init_transactions(60)
    producer.begin_transaction()
    for i in range(30):
        producer.produce("txn-out", value=b"%d" % i, partition=i % 3)
    group = Consumer(client("carol", "carol-pw", **{"group.id": "txn-g"}))
    producer.send_offsets_to_transaction(
        [TopicPartition("txn-in", 0, 7)], group.consumer_group_metadata(), 60
    )
    group.close()
    producer.commit_transaction(60)
    leaders = {cluster.partition("txn-out", p).leader for p in range(3)}
    assert leaders - {coordinator.coordinators[0].node_id}, "every partition is led by the coordinator's node"

    reader = Consumer(
        client("admin", PASSWORDS["admin"], **{"group.id": "txn-g", "isolation.level": "read_committed"})
    )
    reader.assign([TopicPartition("txn-out", p, 0) for p in range(3)])
    values: list[bytes | None] = []
    while len(values) < 30:  # visible only once the markers are on every partition
        assert time.monotonic() < deadline + 60, f"read_committed sees {len(values)} of 30 records"
        message = reader.poll(0.5)
        if message is not None and not message.error():
            values.append(message.value())
    assert sorted(values, key=lambda v: int(v or b"-1")) == [b"%d" % i for i in range(30)]
    assert [tp.offset for tp in reader.committed([TopicPartition("txn-in", 0)], 30)] == [7]
    reader.close()
