"""Coverage-guided fuzzing targets (atheris): the frame decoder with the request header and body codec behind it, the
codec of every message at every version, and the record-batch parser with its decompression.

Each target takes any bytes and must either succeed or raise the error its module documents (ProtocolError,
CorruptRecordError); anything else (another exception, a hang, memory past the fuzzer's -rss_limit_mb, such as a
decompression bomb) is a finding. `tests/fuzz/run.py` runs them under atheris; tests/test_fuzz_corpus.py replays the
committed corpus (tests/fuzz/corpus/<target>/) through them in CI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from protocol.codec import decode, encode
from protocol.errors import ProtocolError
from protocol.framing import NEED_DATA, FrameDecoder
from protocol.headers import read_request_header_prefix, request_header_version, skip_tagged_fields
from protocol.messages import REQUESTS, SCHEMAS
from protocol.primitives import Reader
from protocol.records import CorruptRecordError, decode_records, iter_batches, validate_batch

CORPUS = Path(__file__).resolve().parent / "corpus"
MAX_FRAME = 1 << 20
# Every (message class, version) the codec knows, in a stable order: a target's first two bytes pick one.
MESSAGES: list[tuple[type, int]] = sorted(
    ((cls, v) for cls, schema in SCHEMAS.items() for v in range(schema.valid.lo, schema.valid.hi + 1)),
    key=lambda cv: (cv[0].__name__, cv[1]),
)


def frames(data: bytes) -> None:
    """Bytes off a socket, fed in chunks (the first byte sets their size), framed, and each frame read as a request
    the way the broker's dispatcher does: header prefix, tagged fields of a v2 header, the body by its schema."""
    if not data:
        return
    chunk = data[0] % 64 + 1
    decoder = FrameDecoder(MAX_FRAME)
    try:
        for start in range(1, len(data), chunk):
            decoder.feed(data[start : start + chunk])
            while (frame := decoder.next_frame()) is not NEED_DATA:
                assert isinstance(frame, bytearray)
                _request(frame)
    except ProtocolError:
        pass


def _request(frame: bytearray) -> None:
    reader = Reader(memoryview(frame))
    header = read_request_header_prefix(reader)
    cls = REQUESTS.get(header.request_api_key)
    if cls is None:
        return
    schema = SCHEMAS[cls]
    version = header.request_api_version
    if not schema.valid.lo <= version <= schema.valid.hi:
        return
    if request_header_version(schema, version) >= 2:
        skip_tagged_fields(reader)
    decode(cls, version, memoryview(frame)[reader.pos :])


def codec(data: bytes) -> None:
    """Any message at any version: decodes or raises ProtocolError; what decodes encodes again to a message that
    decodes to the same value."""
    if len(data) < 2:
        return
    cls, version = MESSAGES[int.from_bytes(data[:2], "big") % len(MESSAGES)]
    try:
        message: object = decode(cls, version, data[2:])
    except ProtocolError:
        return
    again = encode(message, version)
    assert decode(cls, version, again) == message, (cls.__name__, version)


def records(data: bytes) -> None:
    """Concatenated record batches: each is validated (never raising) and its records decoded, decompressing any
    codec, whatever its CRC says; only CorruptRecordError may come out, and no bomb may blow up memory."""
    for batch in iter_batches(data):
        validate_batch(batch)
        try:
            decode_records(batch)
        except CorruptRecordError:
            pass


TARGETS: dict[str, Callable[[bytes], None]] = {"frames": frames, "codec": codec, "records": records}
