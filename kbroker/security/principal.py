"""Who a connection is: Kafka's `KafkaPrincipal` ("User:alice") and the rules that turn a TLS client certificate's
distinguished name into one (`ssl.principal.mapping.rules`, KIP-371).

A rule is `RULE:pattern/replacement/[LU]` or `DEFAULT`; rules are tried in order, the first whose pattern matches the
whole DN gives the name (the replacement may use $1 … of the pattern's groups, then L lowers or U uppers it); DEFAULT
gives the DN unchanged. A DN no rule matches cannot log in, as in Kafka.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbroker.common import ConfigError

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """ "User:alice" (the name may itself hold colons)."""
        kind, sep, name = text.partition(":")
        if not sep or not kind:
            raise ValueError(f"{text!r} is not a principal of the form Type:name")
        return cls(kind, name)


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str
    case: str  # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        match = self.pattern.fullmatch(dn)
        if match is None:
            return None
        name = match.expand(self.replacement)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


class PrincipalMapper:
    """ssl.principal.mapping.rules, parsed once: `PrincipalMapper.parse("RULE:^CN=(.*?),.*$/$1/L,DEFAULT")`."""

    def __init__(self, rules: list[_Rule], text: str) -> None:
        self._rules = rules
        self._text = text

    @classmethod
    def parse(cls, text: str) -> PrincipalMapper:
        rules: list[_Rule] = []
        rest = text.strip()
        while rest:
            if rest.startswith("DEFAULT"):
                rules.append(_Rule(None, "", ""))
                rest = rest[len("DEFAULT") :]
            elif rest.startswith("RULE:"):
                pattern, rest = _until_slash(rest[len("RULE:") :], text)
                replacement, rest = _until_slash(rest, text)
                case = rest[:1] if rest[:1] in ("L", "U") else ""
                rest = rest[len(case) :]
                try:
                    compiled = re.compile(pattern)
                except re.error as exc:
                    raise ConfigError(
                        f"ssl.principal.mapping.rules: bad pattern {pattern!r}: {exc}"
                    ) from None
                # Java's $1 group references, in Python's syntax.
                rules.append(_Rule(compiled, re.sub(r"\$(\d+)", r"\\g<\1>", replacement), case))
            else:
                raise ConfigError(f"ssl.principal.mapping.rules: cannot read {rest!r} (in {text!r})")
            rest = rest.lstrip()
            if rest.startswith(","):
                rest = rest[1:].lstrip()
            elif rest:
                raise ConfigError(f"ssl.principal.mapping.rules: expected ',' before {rest!r}")
        if not rules:
            rules.append(_Rule(None, "", ""))
        return cls(rules, text)

    def name_of(self, dn: str) -> str:
        """The principal name of a certificate's DN; ValueError when no rule applies."""
        for rule in self._rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise ValueError(f"no ssl.principal.mapping.rules apply to {dn}")


def _until_slash(text: str, whole: str) -> tuple[str, str]:
    """The text up to the next unescaped '/', unescaped; and what follows it."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] == "/":
            out.append("/")
            i += 2
            continue
        if c == "/":
            return "".join(out), text[i + 1 :]
        out.append(c)
        i += 1
    raise ConfigError(f"ssl.principal.mapping.rules: a RULE needs pattern/replacement/ in {whole!r}")
