"""The broker's logging set-up: text or JSON lines, per-module levels from the command line, secrets redacted.

    kbroker serve --log-format json --log-level INFO --log-level kbroker.replication=DEBUG --log-requests 100

`--log-level` takes a level (the root's) or MODULE=LEVEL for one logger and everything under it (Kafka's
log4j loggers work the same way: `kafka.request.logger=DEBUG`); it may be repeated. `--log-format json` writes one JSON
object per line (time, level, logger, message, and the structured fields a record carries, e.g. a request line's
api, client_id and latency_ms), for log shippers. Whatever the format, every record passes `redact` first: the value
of anything named like a secret (password, secret, token, sasl.jaas.config, …) is replaced by `[redacted]`, so a
setting or message that quotes one never reaches the log.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

REDACTED = "[redacted]"

# A key that names a secret (Kafka marks these configs "sensitive": passwords, keys, JAAS configs, tokens), then
# `=` (the value right after it) or `:` and its value: up to the end of a quoted string, or up to whitespace, a comma,
# a semicolon or a closing bracket (so that a message merely naming `password=` keeps its words).
_SECRET = re.compile(
    r"""(?ix)
    (?P<key>[\w.\-]*(?:password|passwd|secret|token|credential|jaas\.config|private[._-]?key|api[._-]?key)[\w.\-]*)
    (?P<sep>["']?\s*(?:=|:\s*))
    (?P<value>"[^"]*"|'[^']*'|[^\s,;'"})\]]+)
    """
)
_SECRET_NAME = re.compile(
    r"(?i)password|passwd|secret|token|credential|jaas\.config|private[._-]?key|api[._-]?key"
)

# LogRecord's own attributes: whatever else a record carries came from `extra=` and goes into the JSON object.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}

LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def redact(text: str) -> str:
    """`text` with the value of every secret-named key replaced."""
    return _SECRET.sub(lambda m: f"{m['key']}{m['sep']}{REDACTED}", text)


class RedactingFilter(logging.Filter):
    """Formats the record's message once, redacted, and redacts its extra fields named like secrets."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        for name, value in list(record.__dict__.items()):
            if name in _STANDARD:
                continue
            if _SECRET_NAME.search(name):
                setattr(record, name, REDACTED)
            elif isinstance(value, str):
                setattr(record, name, redact(value))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                out[name] = value if isinstance(value, str | int | float | bool | type(None)) else str(value)
        if record.exc_info:
            out["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _TextFormatter(logging.Formatter):
    def formatException(self, ei: Any) -> str:
        return redact(super().formatException(ei))


def parse_levels(specs: Sequence[str]) -> dict[str, int]:
    """{logger name ('' for the root): level} from LEVEL / MODULE=LEVEL items; ValueError names a bad one."""
    levels: dict[str, int] = {}
    for spec in specs:
        name, sep, level = spec.rpartition("=")
        level = level.strip().upper()
        if level == "WARN":
            level = "WARNING"
        if level not in LEVELS:
            raise ValueError(f"--log-level {spec!r}: the level must be one of {', '.join(LEVELS)}")
        levels[name.strip() if sep else ""] = getattr(logging, level)
    return levels


def configure(levels: Sequence[str] = ("INFO",), fmt: str = "text") -> None:
    """Set up the root handler (stderr) in `fmt` ("text" or "json") with the given levels."""
    parsed = parse_levels(levels)
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    elif fmt == "text":
        handler.setFormatter(_TextFormatter(TEXT_FORMAT))
    else:
        raise ValueError(f"--log-format must be text or json, not {fmt!r}")
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(parsed.pop("", logging.INFO))
    for name, level in parsed.items():
        logging.getLogger(name).setLevel(level)
