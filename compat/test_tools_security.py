"""Kafka's own CLI tools managing security, against a kbroker (with the tools of 3.9.2 and 4.3.1) and against Apache
Kafka 3.9.2 (its own tools), with the same assertions: `kafka-acls` adds, lists and removes ACLs; `kafka-configs`
adds, describes and deletes SCRAM credentials (the user then logs in, or no longer can) and client quotas. The tools
log in as the super user over SASL_PLAINTEXT (--command-config), as an administrator would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat.conftest import require_kafka
from compat.kafka import DEFAULT_VERSIONS, KAFKA_3
from compat.kafka.tools import KafkaTools
from compat.security_targets import AclKafka, AclKbroker
from tests.broker_process import BrokerProcess
from tests.security_support import PASSWORDS, SaslFailed, sasl_login
from tests.test_groups_support import Wire

pytestmark = pytest.mark.timeout(300)

ADMIN_CONFIG = (
    "security.protocol=SASL_PLAINTEXT\n"
    "sasl.mechanism=PLAIN\n"
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="admin" password="{PASSWORDS["admin"]}";\n'
)
PAIRS = [("kbroker", release) for release in DEFAULT_VERSIONS] + [(f"kafka-{KAFKA_3}", KAFKA_3)]


@pytest.fixture(scope="module", params=PAIRS, ids=[f"{t}-tools-{r}" for t, r in PAIRS])
def setting(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[BrokerProcess, KafkaTools, Path]]:
    target, release = request.param
    if target == "kbroker":
        broker: BrokerProcess = AclKbroker(tmp_path_factory.mktemp("tools-kbroker"))
    else:
        require_kafka(KAFKA_3)
        broker = AclKafka(KAFKA_3)
    tools = KafkaTools(release, require_kafka(release))
    config = tmp_path_factory.mktemp("tools-config") / "admin.properties"
    config.write_text(ADMIN_CONFIG)
    broker.start()
    try:
        yield broker, tools, config
    finally:
        broker.stop()


def _bootstrap(broker: BrokerProcess) -> str:
    return broker.sasl_bootstrap  # type: ignore[attr-defined, no-any-return]


def test_kafka_acls_add_list_remove(setting: tuple[BrokerProcess, KafkaTools, Path]) -> None:
    broker, tools, config = setting
    common = ["--bootstrap-server", _bootstrap(broker), "--command-config", str(config)]
    tools.run("kafka-acls", *common, "--add", "--allow-principal", "User:carol", "--operation", "Read",
              "--operation", "Describe", "--topic", "tools-acl", "--group", "tools-group")  # fmt: skip
    listed = tools.run("kafka-acls", *common, "--list", "--topic", "tools-acl").stdout
    assert "principal=User:carol" in listed
    assert "operation=READ" in listed
    assert "operation=DESCRIBE" in listed
    assert "permissionType=ALLOW" in listed
    every = tools.run("kafka-acls", *common, "--list").stdout
    assert "name=tools-group" in every
    tools.run("kafka-acls", *common, "--remove", "--force", "--allow-principal", "User:carol", "--operation", "Read",
              "--topic", "tools-acl")  # fmt: skip
    listed = tools.run("kafka-acls", *common, "--list", "--topic", "tools-acl").stdout
    assert "operation=READ" not in listed
    assert "operation=DESCRIBE" in listed


def test_kafka_configs_scram_credentials(setting: tuple[BrokerProcess, KafkaTools, Path]) -> None:
    broker, tools, config = setting
    common = ["--bootstrap-server", broker.bootstrap, "--command-config", str(config)]
    common[1] = _bootstrap(broker)
    tools.run("kafka-configs", *common, "--alter", "--entity-type", "users", "--entity-name", "dave",
              "--add-config", "SCRAM-SHA-512=[iterations=8192,password=dave-secret]")  # fmt: skip
    described = tools.run("kafka-configs", *common, "--describe", "--entity-type", "users",
                          "--entity-name", "dave").stdout  # fmt: skip
    assert "SCRAM-SHA-512=iterations=8192" in described
    # Kafka's SASL_PLAINTEXT listener here enables PLAIN only; kbroker's the same: so the credential is checked by
    # describing it, and by logging in where SCRAM is enabled (tests/test_security_cluster.py does, over etcd).
    tools.run("kafka-configs", *common, "--alter", "--entity-type", "users", "--entity-name", "dave",
              "--delete-config", "SCRAM-SHA-512")  # fmt: skip
    described = tools.run("kafka-configs", *common, "--describe", "--entity-type", "users",
                          "--entity-name", "dave").stdout  # fmt: skip
    assert "SCRAM-SHA-512" not in described


def test_kafka_configs_client_quotas(setting: tuple[BrokerProcess, KafkaTools, Path]) -> None:
    broker, tools, config = setting
    common = ["--bootstrap-server", _bootstrap(broker), "--command-config", str(config)]
    tools.run("kafka-configs", *common, "--alter", "--entity-type", "users", "--entity-name", "erin",
              "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")  # fmt: skip
    tools.run("kafka-configs", *common, "--alter", "--entity-type", "clients", "--entity-default",
              "--add-config", "request_percentage=150")  # fmt: skip
    described = tools.run("kafka-configs", *common, "--describe", "--entity-type", "users",
                          "--entity-name", "erin").stdout  # fmt: skip
    assert "producer_byte_rate=1048576" in described
    assert "consumer_byte_rate=2097152" in described
    defaults = tools.run("kafka-configs", *common, "--describe", "--entity-type", "clients",
                         "--entity-default").stdout  # fmt: skip
    assert "request_percentage=150" in defaults


def test_a_user_without_rights_is_refused_by_the_tools(
    setting: tuple[BrokerProcess, KafkaTools, Path],
) -> None:
    broker, tools, config = setting
    bob = config.with_name("bob.properties")
    bob.write_text(ADMIN_CONFIG.replace('username="admin"', 'username="bob"').replace(
        PASSWORDS["admin"], PASSWORDS["bob"]))  # fmt: skip
    result = tools.run("kafka-acls", "--bootstrap-server", _bootstrap(broker), "--command-config", str(bob),
                       "--list", expect_failure=True)  # fmt: skip
    assert "ClusterAuthorizationException" in result.stdout + result.stderr
    # and bob can still log in: refused for what he asked, not locked out
    with Wire(_bootstrap(broker)) as wire:
        try:
            sasl_login(wire, "PLAIN", "bob", PASSWORDS["bob"])
        except SaslFailed as exc:  # pragma: no cover - the assertion below says what went wrong
            raise AssertionError(f"bob cannot log in: {exc}") from None
