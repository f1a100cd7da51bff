"""`sasl.jaas.config`: one JAAS login module, in Kafka's syntax.

    org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s" user_alice="a";

The broker reads the options: `user_NAME="password"` are the PLAIN users of a listener; `username`/`password` are
what this broker logs in with when it is the client (a follower fetching from its leader).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kbroker.common import ConfigError

_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))')


@dataclass(frozen=True, slots=True)
class JaasConfig:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def users(self) -> dict[str, str]:
        """PLAIN's users: user_NAME="password" options."""
        return {k[len("user_") :]: v for k, v in self.options.items() if k.startswith("user_")}


def parse_jaas(text: str, where: str = "sasl.jaas.config") -> JaasConfig:
    tokens: list[tuple[str, bool]] = []  # (text, was_quoted)
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            if text[pos:].strip():
                raise ConfigError(f"{where}: cannot read {text[pos : pos + 20]!r}")
            break
        quoted, bare, equals, semicolon = match.groups()
        if quoted is not None:
            tokens.append((re.sub(r"\\(.)", r"\1", quoted), True))
        else:
            tokens.append((bare or equals or semicolon or "", False))
        pos = match.end()
    if len(tokens) < 3 or tokens[-1] != (";", False):
        raise ConfigError(f"{where}: expected 'LoginModule required key=\"value\" …;'")
    module, flag = tokens[0][0], tokens[1][0]
    if flag not in _FLAGS:
        raise ConfigError(f"{where}: {flag!r} is not a login module flag ({', '.join(_FLAGS)})")
    body = tokens[2:-1]
    if any(t == (";", False) for t in body):
        raise ConfigError(f"{where}: exactly one login module is allowed")
    options: dict[str, str] = {}
    i = 0
    while i < len(body):
        if i + 2 >= len(body) or body[i + 1] != ("=", False):
            raise ConfigError(f"{where}: expected key=value at {body[i][0]!r}")
        options[body[i][0]] = body[i + 2][0]
        i += 3
    return JaasConfig(module, flag, options)
