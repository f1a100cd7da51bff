"""What `kbroker topic produce/consume` read and print: kcat's `-f` format tokens, offsets and times as the user
writes them, and the Java client's default partitioner (so a key lands where any Kafka producer would put it)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from kbroker.tools.session import Message

DEFAULT_FORMAT = "%s\\n"
FORMAT_HELP = (
    "kcat's -f tokens: %%t topic, %%p partition, %%o offset, %%T timestamp (ms), %%k key, %%K key length, "
    "%%s value, %%S value length, %%h headers (k=v,…), \\n \\t \\r \\\\ escapes"
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="backslashreplace")


def _length(data: bytes | None) -> str:
    return "-1" if data is None else str(len(data))


_TOKENS: dict[str, Callable[[Message], str]] = {
    "t": lambda m: m.topic,
    "p": lambda m: str(m.partition),
    "o": lambda m: str(m.offset),
    "T": lambda m: str(m.timestamp),
    "k": lambda m: _text(m.key),
    "K": lambda m: _length(m.key),
    "s": lambda m: _text(m.value),
    "S": lambda m: _length(m.value),
    "h": lambda m: ",".join(f"{k}={_text(v)}" for k, v in m.headers),
    "%": lambda m: "%",
}


def compile_format(fmt: str) -> Callable[[Message], str]:
    """A function printing a message as `fmt` says; ValueError names an unknown token."""
    parts: list[str | Callable[[Message], str]] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c in "%\\" and i + 1 < len(fmt):
            nxt = fmt[i + 1]
            if c == "%":
                if nxt not in _TOKENS:
                    raise ValueError(f"unknown format token %{nxt} ({FORMAT_HELP.replace('%%', '%')})")
                parts.append(_TOKENS[nxt])
            else:
                parts.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        parts.append(c)
        i += 1

    def render(message: Message) -> str:
        return "".join(p if isinstance(p, str) else p(message) for p in parts)

    return render


def parse_time_ms(text: str) -> int:
    """Milliseconds since the epoch, from a number of milliseconds or an ISO 8601 date-time (UTC if no zone)."""
    if re.fullmatch(r"\d+", text):
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither milliseconds since the epoch nor an ISO 8601 date-time"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def parse_header(text: str) -> tuple[str, bytes]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"a header is KEY=VALUE, got {text!r}")
    return key, value.encode()


def murmur2(data: bytes) -> int:
    """MurmurHash2 (32-bit, seed 0x9747b28c) as the Java client's default partitioner computes it."""
    length = len(data)
    m = 0x5BD1E995
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    end = length - length % 4
    for i in range(0, end, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    if rest == 3:
        h ^= data[end + 2] << 16
    if rest >= 2:
        h ^= data[end + 1] << 8
    if rest >= 1:
        h ^= data[end]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def partition_for_key(key: bytes, partitions: int) -> int:
    """The Java client's choice for a keyed record: positive murmur2 of the key, modulo the partition count."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions
