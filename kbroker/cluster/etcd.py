"""A small async etcd v3 client for trio, over etcd's JSON gateway (grpc-gateway).

Why not a library: no maintained etcd v3 client runs under trio. aetcd, aioetcd3, async-etcd3gw and
etcd3-async-client are built on asyncio (grpc.aio or aiohttp) and would need trio-asyncio around every call;
etcd3 and etcd-sdk-python are synchronous gRPC clients that would block the event loop (or need a thread per
watch); etcd-client-py binds a Rust client whose futures are asyncio's. The JSON gateway that every etcd server
serves on its client port needs nothing but HTTP, and httpx runs on trio through anyio.

Gateway facts this module relies on (checked against etcd 3.4.23):
- The paths are ``/v3/...`` (3.4 still accepts ``/v3beta`` too, 3.5 dropped it; ``/v3`` works on both).
- Keys and values are base64 in JSON. int64 fields come back as JSON strings, and fields holding their proto3
  default (0, false, empty, the first enum value such as PUT) are omitted.
- Errors are HTTP 4xx/5xx with ``{"error", "message", "code"}`` where code is a gRPC status code.
- ``/v3/lease/keepalive`` and ``/v3/watch`` are streaming methods. A keepalive request with a single body gets a
  single ``{"result": ...}`` answer; an expired lease answers with no TTL (0) rather than an error. A watch answers
  with newline-delimited ``{"result": ...}`` objects: first ``created``, then events, and ``canceled`` with
  ``compact_revision`` when the start revision was compacted.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import trio

log = logging.getLogger(__name__)

# gRPC status codes that etcd puts in the "code" field of a gateway error.
GRPC_NOT_FOUND = 5
GRPC_OUT_OF_RANGE = 11
GRPC_UNAVAILABLE = 14

CompareTarget = Literal["VERSION", "CREATE", "MOD", "VALUE", "LEASE"]
CompareOp = Literal["==", "!=", "<", ">"]

_COMPARE_RESULT: dict[str, str] = {"==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS", ">": "GREATER"}


class EtcdError(Exception):
    """etcd answered with an error (a gRPC status code and etcd's message)."""

    def __init__(self, message: str, code: int = 0, http_status: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.http_status = http_status


class EtcdUnavailable(EtcdError):
    """No endpoint could be reached (or every reachable one said it was unavailable)."""


class LeaseNotFound(EtcdError):
    """The lease has expired or was revoked."""


class Compacted(EtcdError):
    """The revision asked for has been compacted away; the caller must read the current state again."""

    def __init__(self, compact_revision: int) -> None:
        super().__init__(f"revision compacted (compact_revision={compact_revision})", GRPC_OUT_OF_RANGE)
        self.compact_revision = compact_revision


@dataclass(frozen=True)
class KeyValue:
    key: bytes
    value: bytes
    create_revision: int
    mod_revision: int
    version: int
    lease: int


@dataclass(frozen=True)
class RangeResult:
    kvs: list[KeyValue]
    count: int
    more: bool
    revision: int


@dataclass(frozen=True)
class PutResult:
    revision: int
    prev_kv: KeyValue | None


@dataclass(frozen=True)
class DeleteResult:
    deleted: int
    revision: int
    prev_kvs: list[KeyValue]


@dataclass(frozen=True)
class TxnResult:
    succeeded: bool
    revision: int
    responses: list[RangeResult | PutResult | DeleteResult]


@dataclass(frozen=True)
class Lease:
    id: int
    ttl: int


@dataclass(frozen=True)
class Event:
    type: Literal["PUT", "DELETE"]
    kv: KeyValue
    prev_kv: KeyValue | None


@dataclass(frozen=True)
class WatchResponse:
    revision: int
    events: list[Event]


# ---- transaction building blocks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    """One condition of a transaction: ``target(key) op value``.

    A key that does not exist has create_revision, mod_revision and version 0, which is how "absent" is tested.
    """

    key: bytes
    target: CompareTarget
    op: CompareOp
    value: int | bytes

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "key": _b64(self.key),
            "target": self.target,
            "result": _COMPARE_RESULT[self.op],
        }
        if self.target == "VALUE":
            assert isinstance(self.value, bytes)
            body["value"] = _b64(self.value)
        else:
            assert isinstance(self.value, int)
            field_name = {
                "VERSION": "version",
                "CREATE": "create_revision",
                "MOD": "mod_revision",
                "LEASE": "lease",
            }
            body[field_name[self.target]] = str(self.value)
        return body


def create_revision_is(key: bytes, revision: int, op: CompareOp = "==") -> Compare:
    return Compare(key, "CREATE", op, revision)


def mod_revision_is(key: bytes, revision: int, op: CompareOp = "==") -> Compare:
    return Compare(key, "MOD", op, revision)


def value_is(key: bytes, value: bytes, op: CompareOp = "==") -> Compare:
    return Compare(key, "VALUE", op, value)


def key_absent(key: bytes) -> Compare:
    return Compare(key, "CREATE", "==", 0)


def key_present(key: bytes) -> Compare:
    return Compare(key, "CREATE", ">", 0)


@dataclass(frozen=True)
class Put:
    key: bytes
    value: bytes
    lease: int = 0

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"key": _b64(self.key), "value": _b64(self.value)}
        if self.lease:
            body["lease"] = str(self.lease)
        return {"request_put": body}


@dataclass(frozen=True)
class Get:
    key: bytes
    range_end: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"key": _b64(self.key)}
        if self.range_end is not None:
            body["range_end"] = _b64(self.range_end)
        return {"request_range": body}


@dataclass(frozen=True)
class Delete:
    key: bytes
    range_end: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"key": _b64(self.key)}
        if self.range_end is not None:
            body["range_end"] = _b64(self.range_end)
        return {"request_delete_range": body}


TxnOp = Put | Get | Delete


def prefix_range_end(prefix: bytes) -> bytes:
    """The range_end that selects every key starting with prefix (etcd's convention: prefix + 1 on the last
    byte that is not 0xff)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\x00"  # the whole keyspace


def parse_etcd_url(url: str) -> tuple[list[str], str | None]:
    """``etcd://HOST:PORT[,HOST:PORT...][/PATH]`` -> (["http://HOST:PORT", ...], PATH or None)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme != "etcd":
        raise ValueError(f"metadata url must start with etcd://, got {url!r}")
    hosts, _, path = rest.partition("/")
    endpoints = []
    for host in hosts.split(","):
        host = host.strip()
        if not host:
            continue
        if ":" not in host:
            host += ":2379"
        endpoints.append(f"http://{host}")
    if not endpoints:
        raise ValueError(f"metadata url names no etcd host: {url!r}")
    return endpoints, (path.strip("/") or None)


# ---- the client -----------------------------------------------------------------------------------------


class EtcdClient:
    """An etcd v3 client over the JSON gateway, with failover across endpoints.

    A request goes to the current endpoint; if it cannot be reached (or answers UNAVAILABLE, e.g. a member
    without a raft leader) the next endpoint is tried, each at most once per request. Note for callers: a
    transport error after the request was sent may hide a write that was applied, so a retried txn can fail its
    compare because of its own first attempt. Every write in kbroker is a compare-and-swap, so such a retry
    fails safe (the caller re-reads), never applying twice.
    """

    def __init__(self, endpoints: Sequence[str], *, request_timeout: float = 5.0) -> None:
        if not endpoints:
            raise ValueError("at least one etcd endpoint is needed")
        self.endpoints = [e.rstrip("/") for e in endpoints]
        self._current = 0
        self._request_timeout = request_timeout
        # One pool for unary calls with a hard timeout; watches are long-lived reads and get their own.
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(request_timeout))
        self._watch_http = httpx.AsyncClient(
            timeout=httpx.Timeout(connect=request_timeout, read=None, write=request_timeout, pool=None)
        )

    @classmethod
    def from_url(cls, url: str, *, request_timeout: float = 5.0) -> EtcdClient:
        endpoints, _ = parse_etcd_url(url)
        return cls(endpoints, request_timeout=request_timeout)

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._watch_http.aclose()

    async def __aenter__(self) -> EtcdClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ---- plumbing

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._http.is_closed:
            # A request still in flight when its owner replaced this client (a lost registration joins again with a
            # new one) must fail like an unreachable etcd, not with httpx's RuntimeError: that crashed the broker.
            raise EtcdUnavailable(f"the etcd client is closed: {path} not sent", GRPC_UNAVAILABLE)
        last_error: Exception | None = None
        for attempt in range(len(self.endpoints)):
            index = (self._current + attempt) % len(self.endpoints)
            url = self.endpoints[index] + path
            try:
                response = await self._http.post(url, json=body)
            except httpx.TransportError as exc:
                log.debug("etcd endpoint %s failed: %r", url, exc)
                last_error = exc
                continue
            data = _decode_body(response)
            if response.status_code != 200:
                error = _error_from(data, response.status_code)
                if error.code == GRPC_UNAVAILABLE:
                    last_error = error
                    continue
                raise error
            self._current = index
            return data
        raise EtcdUnavailable(f"no etcd endpoint answered {path}: {last_error!r}", GRPC_UNAVAILABLE)

    # ---- KV

    async def range(
        self,
        key: bytes,
        range_end: bytes | None = None,
        *,
        prefix: bool = False,
        revision: int = 0,
        limit: int = 0,
        keys_only: bool = False,
        count_only: bool = False,
        newest_first: bool = False,
    ) -> RangeResult:
        """Keys in [key, range_end) (or under prefix key). newest_first sorts by mod_revision, descending."""
        body: dict[str, Any] = {"key": _b64(key)}
        if prefix:
            range_end = prefix_range_end(key)
        if range_end is not None:
            body["range_end"] = _b64(range_end)
        if revision:
            body["revision"] = str(revision)
        if limit:
            body["limit"] = str(limit)
        if keys_only:
            body["keys_only"] = True
        if count_only:
            body["count_only"] = True
        if newest_first:
            body["sort_order"] = "DESCEND"
            body["sort_target"] = "MOD"
        try:
            data = await self._call("/v3/kv/range", body)
        except EtcdError as exc:
            if exc.code == GRPC_OUT_OF_RANGE and "compacted" in str(exc):
                raise Compacted(0) from exc
            raise
        return _range_result(data, _revision(data))

    async def get(self, key: bytes) -> KeyValue | None:
        result = await self.range(key)
        return result.kvs[0] if result.kvs else None

    async def get_prefix(self, prefix: bytes) -> RangeResult:
        return await self.range(prefix, prefix=True)

    async def put(self, key: bytes, value: bytes, *, lease: int = 0, prev_kv: bool = False) -> PutResult:
        body: dict[str, Any] = {"key": _b64(key), "value": _b64(value)}
        if lease:
            body["lease"] = str(lease)
        if prev_kv:
            body["prev_kv"] = True
        data = await self._call("/v3/kv/put", body)
        prev = data.get("prev_kv")
        return PutResult(_revision(data), _kv(prev) if prev else None)

    async def delete(
        self, key: bytes, range_end: bytes | None = None, *, prefix: bool = False
    ) -> DeleteResult:
        body: dict[str, Any] = {"key": _b64(key), "prev_kv": True}
        if prefix:
            range_end = prefix_range_end(key)
        if range_end is not None:
            body["range_end"] = _b64(range_end)
        data = await self._call("/v3/kv/deleterange", body)
        return DeleteResult(
            int(data.get("deleted", 0)), _revision(data), [_kv(kv) for kv in data.get("prev_kvs", [])]
        )

    async def txn(
        self, compare: Sequence[Compare], success: Sequence[TxnOp], failure: Sequence[TxnOp] = ()
    ) -> TxnResult:
        body = {
            "compare": [c.to_json() for c in compare],
            "success": [op.to_json() for op in success],
            "failure": [op.to_json() for op in failure],
        }
        data = await self._call("/v3/kv/txn", body)
        revision = _revision(data)
        responses: list[RangeResult | PutResult | DeleteResult] = []
        for item in data.get("responses", []):
            if "response_range" in item:
                responses.append(_range_result(item["response_range"], revision))
            elif "response_put" in item:
                prev = item["response_put"].get("prev_kv")
                responses.append(PutResult(revision, _kv(prev) if prev else None))
            elif "response_delete_range" in item:
                sub = item["response_delete_range"]
                prev_kvs = [_kv(kv) for kv in sub.get("prev_kvs", [])]
                responses.append(DeleteResult(int(sub.get("deleted", 0)), revision, prev_kvs))
        return TxnResult(bool(data.get("succeeded", False)), revision, responses)

    # ---- leases

    async def lease_grant(self, ttl: int, lease_id: int = 0) -> Lease:
        body: dict[str, Any] = {"TTL": str(ttl)}
        if lease_id:
            body["ID"] = str(lease_id)
        data = await self._call("/v3/lease/grant", body)
        if data.get("error"):
            raise EtcdError(str(data["error"]))
        return Lease(int(data["ID"]), int(data.get("TTL", 0)))

    async def lease_keepalive(self, lease_id: int) -> int:
        """Refresh the lease once and return its new TTL; raise LeaseNotFound if it has expired."""
        data = await self._call("/v3/lease/keepalive", {"ID": str(lease_id)})
        result = data.get("result", {})
        ttl = int(result.get("TTL", 0))
        if ttl <= 0:
            raise LeaseNotFound(f"lease {lease_id:x} has expired", GRPC_NOT_FOUND)
        return ttl

    async def lease_revoke(self, lease_id: int) -> None:
        """Revoke the lease, deleting every key attached to it. Revoking an expired lease is not an error."""
        try:
            await self._call("/v3/lease/revoke", {"ID": str(lease_id)})
        except EtcdError as exc:
            if exc.code != GRPC_NOT_FOUND:
                raise

    async def lease_time_to_live(self, lease_id: int) -> int:
        """Seconds left on the lease, or -1 if it does not exist (any more)."""
        data = await self._call("/v3/lease/timetolive", {"ID": str(lease_id)})
        return int(data.get("TTL", -1))

    # ---- watch

    @asynccontextmanager
    async def watch(
        self,
        key: bytes,
        range_end: bytes | None = None,
        *,
        prefix: bool = False,
        start_revision: int = 0,
        prev_kv: bool = False,
    ) -> AsyncIterator[WatchStream]:
        """Open a watch; on entry the watch has been created on the server, so no later change is missed.

        Iterating the stream yields WatchResponses. It raises Compacted if start_revision is no longer
        available, and EtcdUnavailable if the connection breaks; the caller resumes from the last revision
        it saw + 1.
        """
        if prefix:
            range_end = prefix_range_end(key)
        create: dict[str, Any] = {"key": _b64(key)}
        if range_end is not None:
            create["range_end"] = _b64(range_end)
        if start_revision:
            create["start_revision"] = str(start_revision)
        if prev_kv:
            create["prev_kv"] = True
        body = {"create_request": create}
        last_error: Exception | None = None
        for attempt in range(len(self.endpoints)):
            index = (self._current + attempt) % len(self.endpoints)
            url = self.endpoints[index] + "/v3/watch"
            handed_over = False
            try:
                async with self._watch_http.stream("POST", url, json=body) as response:
                    if response.status_code != 200:
                        raw = await response.aread()
                        error = _error_from(_decode_bytes(raw), response.status_code)
                        if error.code == GRPC_UNAVAILABLE:
                            last_error = error
                            continue
                        raise error
                    stream = WatchStream(response)
                    with trio.fail_after(self._request_timeout):
                        await stream.wait_created()
                    self._current = index
                    handed_over = True
                    yield stream
                    return
            except (httpx.TransportError, trio.TooSlowError, EtcdUnavailable) as exc:
                # Once the caller has the stream, a failure is theirs to handle (they resume from their own
                # last revision); before that, another endpoint is tried.
                if handed_over:
                    raise
                last_error = exc
        raise EtcdUnavailable(f"no etcd endpoint accepted a watch: {last_error!r}", GRPC_UNAVAILABLE)


@dataclass
class WatchStream:
    """The responses of one watch, read from the gateway's newline-delimited JSON stream."""

    _response: httpx.Response
    _lines: AsyncIterator[str] | None = None
    _pending: list[WatchResponse] = field(default_factory=list)

    def _line_iter(self) -> AsyncIterator[str]:
        if self._lines is None:
            self._lines = self._response.aiter_lines()
        return self._lines

    async def _next_result(self) -> dict[str, Any]:
        try:
            async for line in self._line_iter():
                if not line.strip():
                    continue
                data = _decode_bytes(line.encode())
                if "error" in data:
                    # The gateway reports a broken stream (e.g. "grpc: the client connection is closing" while
                    # the member shuts down) in-band; to the caller it is a lost watch to resume elsewhere.
                    error = _error_from(data.get("error") or data, 200)
                    raise EtcdUnavailable(str(error), error.code or GRPC_UNAVAILABLE)
                result: dict[str, Any] = data.get("result", {})
                return result
        except httpx.TransportError as exc:
            raise EtcdUnavailable(f"watch stream broke: {exc!r}", GRPC_UNAVAILABLE) from exc
        raise EtcdUnavailable("watch stream ended", GRPC_UNAVAILABLE)

    async def wait_created(self) -> None:
        while True:
            result = await self._next_result()
            if result.get("canceled"):
                raise _cancel_error(result)
            if result.get("created"):
                # etcd may put events in the same message as "created" only in theory; keep them if so.
                if result.get("events"):
                    self._pending.append(_watch_response(result))
                return
            if result.get("events"):
                self._pending.append(_watch_response(result))

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> WatchResponse:
        if self._pending:
            return self._pending.pop(0)
        while True:
            result = await self._next_result()
            if result.get("canceled"):
                raise _cancel_error(result)
            if result.get("events"):
                return _watch_response(result)
            # progress notifications and empty results carry no events; skip them


# ---- JSON helpers ---------------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def _kv(data: dict[str, Any]) -> KeyValue:
    return KeyValue(
        key=_unb64(data.get("key")),
        value=_unb64(data.get("value")),
        create_revision=int(data.get("create_revision", 0)),
        mod_revision=int(data.get("mod_revision", 0)),
        version=int(data.get("version", 0)),
        lease=int(data.get("lease", 0)),
    )


def _revision(data: dict[str, Any]) -> int:
    return int(data.get("header", {}).get("revision", 0))


def _range_result(data: dict[str, Any], revision: int) -> RangeResult:
    kvs = [_kv(kv) for kv in data.get("kvs", [])]
    return RangeResult(kvs, int(data.get("count", 0)), bool(data.get("more", False)), revision)


def _watch_response(result: dict[str, Any]) -> WatchResponse:
    events = []
    for ev in result.get("events", []):
        prev = ev.get("prev_kv")
        kind: Literal["PUT", "DELETE"] = "DELETE" if ev.get("type") == "DELETE" else "PUT"
        events.append(Event(kind, _kv(ev.get("kv", {})), _kv(prev) if prev else None))
    return WatchResponse(_revision(result), events)


def _cancel_error(result: dict[str, Any]) -> EtcdError:
    compact_revision = int(result.get("compact_revision", 0))
    if compact_revision:
        return Compacted(compact_revision)
    return EtcdError(f"watch canceled: {result.get('cancel_reason', '')}")


def _decode_body(response: httpx.Response) -> dict[str, Any]:
    return _decode_bytes(response.content)


def _decode_bytes(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        return {"error": raw.decode("utf-8", "replace")[:200]}
    return data if isinstance(data, dict) else {"error": repr(data)[:200]}


def _error_from(data: Any, http_status: int) -> EtcdError:
    if not isinstance(data, dict):
        return EtcdError(str(data), 0, http_status)
    message = str(data.get("message") or data.get("error") or f"HTTP {http_status}")
    code = int(data.get("code") or data.get("grpc_code") or (GRPC_UNAVAILABLE if http_status >= 500 else 0))
    if code == GRPC_NOT_FOUND and "lease not found" in message:
        return LeaseNotFound(message, code, http_status)
    if code == GRPC_UNAVAILABLE:
        return EtcdUnavailable(message, code, http_status)
    return EtcdError(message, code, http_status)
