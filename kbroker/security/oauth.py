"""OAUTHBEARER (RFC 7628, KIP-255/KIP-768): the client's initial response carries a JWT, which the broker checks
against the keys of a JWKS (`sasl.oauthbearer.jwks.endpoint.url`, https:// or file://) with PyJWT.

A token is accepted when its signature verifies with a key of the set (by `kid`; an asymmetric algorithm, never
`none`), it has not expired (`exp`, required) and is already valid (`nbf`, `iat`), within
`sasl.oauthbearer.clock.skew.seconds`, and its `aud`/`iss` are the expected ones when those are configured. The
principal is `User:<sub>` (`sasl.oauthbearer.sub.claim.name`); the token's expiry bounds the session (KIP-368).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx
import jwt
import trio

from kbroker.security.settings import OAuthSettings

_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


# A kid the key set lacks makes it read again, but not more often than this (a flood of bad tokens must not flood
# the identity provider).
JWKS_MIN_REREAD_S = 5.0
JWKS_FETCH_TIMEOUT_S = 10.0


async def _fetch(url: str) -> str:
    parsed = urlparse(url)
    try:
        if parsed.scheme == "file":
            return await trio.Path(Path(unquote(parsed.path))).read_text()
        async with httpx.AsyncClient(timeout=JWKS_FETCH_TIMEOUT_S) as client:
            response = await client.get(url)
            response.raise_for_status()
            return response.text
    except (OSError, httpx.HTTPError) as exc:
        raise InvalidToken(f"cannot read the JWKS at {url}: {exc}") from None


class InvalidToken(Exception):
    """The token is refused; the message says why, without the token."""


@dataclass(frozen=True, slots=True)
class ValidToken:
    principal_name: str
    expires_at_ms: int
    scopes: tuple[str, ...]


def parse_client_response(data: bytes) -> tuple[str, dict[str, str]]:
    """(token, extensions) of an OAUTHBEARER initial client response: `n,[a=authzid],` GS2 header, then
    \\x01-separated key=value pairs, `auth=Bearer <token>` among them, ended by \\x01\\x01."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise InvalidToken("the client response is not UTF-8") from None
    header, sep, rest = text.partition("\x01")
    if not sep or not header.startswith("n,") or not header.endswith(","):
        raise InvalidToken("malformed OAUTHBEARER client response (GS2 header)")
    pairs: dict[str, str] = {}
    for item in rest.split("\x01"):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise InvalidToken("malformed OAUTHBEARER client response (key=value)")
        pairs[key] = value
    auth = pairs.pop("auth", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("the OAUTHBEARER client response has no 'auth=Bearer <token>'")
    return token.strip(), pairs


class JwtValidator:
    """Validates tokens against one JWKS; the set is read when first needed, again after the refresh interval, and
    at once (at most every few seconds) for a kid it does not hold yet, so rotated keys are picked up."""

    def __init__(self, settings: OAuthSettings) -> None:
        self.settings = settings
        self._keys: dict[str, jwt.PyJWK] = {}
        self._read_at = -math.inf
        self._lock = trio.Lock()

    async def _key_set(self, kid: str | None) -> dict[str, jwt.PyJWK]:
        async with self._lock:
            now = trio.current_time()
            stale = now - self._read_at >= self.settings.jwks_refresh_ms / 1000
            unknown = kid not in self._keys and now - self._read_at >= JWKS_MIN_REREAD_S
            if stale or unknown:
                data = await _fetch(self.settings.jwks_endpoint_url)
                try:
                    key_set = jwt.PyJWKSet.from_json(data)
                except jwt.PyJWTError as exc:
                    raise InvalidToken(
                        f"the JWKS at {self.settings.jwks_endpoint_url} is unusable: {exc}"
                    ) from None
                self._keys = {k.key_id or "": k for k in key_set.keys}
                self._read_at = now
            return self._keys

    async def validate(self, token: str) -> ValidToken:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"invalid token: {exc}") from None
        keys = await self._key_set(kid)
        key = keys.get(kid or "") or (next(iter(keys.values())) if kid is None and len(keys) == 1 else None)
        if key is None:
            raise InvalidToken(f"no key of the JWKS has the token's kid {kid!r}")
        return self._validate(token, key)

    def _validate(self, token: str, key: jwt.PyJWK) -> ValidToken:
        s = self.settings
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=_ALGORITHMS,
                audience=list(s.expected_audience) or None,
                issuer=s.expected_issuer,
                leeway=s.clock_skew_seconds,
                options={"require": ["exp"], "verify_aud": bool(s.expected_audience)},
            )
        except jwt.InvalidTokenError as exc:
            raise InvalidToken(f"invalid token: {exc}") from None
        subject = claims.get(s.sub_claim_name)
        if not isinstance(subject, str) or not subject.strip():
            raise InvalidToken(f"the token has no {s.sub_claim_name!r} claim")
        scope = claims.get(s.scope_claim_name, ())
        scopes = tuple(scope.split()) if isinstance(scope, str) else tuple(str(x) for x in scope or ())
        return ValidToken(subject, int(float(claims["exp"]) * 1000), scopes)
