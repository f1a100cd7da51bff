"""SCRAM credentials (RFC 5802, RFC 7677) as Kafka keeps them: per user and mechanism the salt, the stored key, the
server key and the iteration count, never the password. The exchange itself is scramp's.

Credentials come from AlterUserScramCredentials (the client sends a salted password: `kafka-configs --alter
--add-config 'SCRAM-SHA-256=[password=…]'`) or from `kbroker serve --add-scram` at start, in the syntax of Kafka's
`kafka-storage format --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]'`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

import scramp

from kbroker.common import ConfigError, KafkaError
from protocol.errors import ErrorCode

# Kafka's ScramMechanism ids (AlterUserScramCredentials, DescribeUserScramCredentials) and hash functions.
MECHANISM_IDS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES = {v: k for k, v in MECHANISM_IDS.items()}
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
# Kafka's bounds on a credential's iterations.
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_json(self) -> dict[str, Any]:
        enc = base64.b64encode
        return {
            "salt": enc(self.salt).decode(),
            "stored_key": enc(self.stored_key).decode(),
            "server_key": enc(self.server_key).decode(),
            "iterations": self.iterations,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ScramCredential:
        dec = base64.b64decode
        return cls(dec(obj["salt"]), dec(obj["stored_key"]), dec(obj["server_key"]), int(obj["iterations"]))


def credential_from_password(
    mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    salt_out, stored_key, server_key, count = scramp.ScramMechanism(mechanism).make_auth_info(
        password, iteration_count=iterations, salt=salt
    )
    return ScramCredential(salt_out, stored_key, server_key, count)


def credential_from_salted_password(
    mechanism: str, salted_password: bytes, salt: bytes, iterations: int
) -> ScramCredential:
    """What AlterUserScramCredentials stores of the salted password the client computed (RFC 5802's StoredKey and
    ServerKey); UNACCEPTABLE_CREDENTIAL for what Kafka refuses."""
    if not salt:
        raise KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salt may not be empty")
    if not salted_password:
        raise KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Salted password may not be empty")
    if iterations < MIN_ITERATIONS:
        raise KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    digest = _HASHES[mechanism]
    client_key = hmac.new(salted_password, b"Client Key", digest).digest()
    server_key = hmac.new(salted_password, b"Server Key", digest).digest()
    return ScramCredential(salt, digest(client_key).digest(), server_key, iterations)


@dataclass(frozen=True, slots=True)
class AddScram:
    """One `--add-scram` argument."""

    mechanism: str
    user: str
    credential: ScramCredential


def parse_add_scram(text: str) -> AddScram:
    """`SCRAM-SHA-512=[name=admin,password=admin-secret]` (also iterations=N, or salt=… and saltedpassword=… in
    base64, as kafka-storage takes them; values may be in double quotes)."""
    mechanism, sep, rest = text.strip().partition("=")
    mechanism = mechanism.strip().upper()
    rest = rest.strip()
    if not sep or mechanism not in MECHANISM_IDS or not (rest.startswith("[") and rest.endswith("]")):
        raise ConfigError(
            f"--add-scram {text!r}: expected SCRAM-SHA-256=[name=USER,password=PASSWORD] (or SCRAM-SHA-512)"
        )
    fields: dict[str, str] = {}
    for item in rest[1:-1].split(","):
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"--add-scram {text!r}: {item!r} is not key=value")
        fields[key.strip().lower()] = value.strip().strip('"')
    name = fields.pop("name", "")
    if not name:
        raise ConfigError(f"--add-scram {text!r}: name= is missing")
    try:
        iterations = int(fields.pop("iterations", DEFAULT_ITERATIONS))
    except ValueError:
        raise ConfigError(f"--add-scram {text!r}: iterations must be a number") from None
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ConfigError(f"--add-scram {text!r}: iterations must be {MIN_ITERATIONS}..{MAX_ITERATIONS}")
    if "password" in fields:
        credential = credential_from_password(mechanism, fields.pop("password"), iterations)
    elif "saltedpassword" in fields and "salt" in fields:
        try:
            credential = credential_from_salted_password(
                mechanism,
                base64.b64decode(fields.pop("saltedpassword")),
                base64.b64decode(fields.pop("salt")),
                iterations,
            )
        except (ValueError, KafkaError) as exc:
            raise ConfigError(f"--add-scram {text!r}: {exc}") from None
    else:
        raise ConfigError(f"--add-scram {text!r}: password= (or salt= and saltedpassword=) is missing")
    if fields:
        raise ConfigError(f"--add-scram {text!r}: unknown field(s) {', '.join(sorted(fields))}")
    return AddScram(mechanism, name, credential)
