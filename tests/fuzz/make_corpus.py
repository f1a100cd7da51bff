"""Write the seed corpus (tests/fuzz/corpus/<target>/): a few valid inputs per target, for the fuzzer to start from.

.venv/bin/python -m tests.fuzz.make_corpus      # idempotent: files are named by their content's hash
"""

from __future__ import annotations

import hashlib
import struct

from protocol import compression
from protocol.codec import encode
from protocol.framing import encode_frame
from protocol.headers import RequestHeader, encode_request_header, request_header_version
from protocol.messages import SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.primitives import Writer
from protocol.records import Record, build_batch
from tests.fuzz.targets import CORPUS, MESSAGES


def batch(codec: int, n: int = 3) -> bytes:
    return bytes(build_batch([Record(i, 1000 + i, b"k%d" % i, b"v" * i, (("h", b"x"),)) for i in range(n)],
                             compression=codec))  # fmt: skip


def requests() -> list[tuple[object, int]]:
    produce = ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[TopicProduceData(
        name="t", partition_data=[PartitionProduceData(index=0, records=batch(compression.NONE))])])  # fmt: skip
    fetch = FetchRequest(
        max_wait_ms=100, topics=[FetchTopic(topic="t", partitions=[FetchPartition(partition=0)])]
    )
    return [
        (ApiVersionsRequest(), 0),
        (ApiVersionsRequest(client_software_name="x", client_software_version="1"), 3),
        (MetadataRequest(topics=[MetadataRequestTopic(name="t")]), 12),
        (produce, 3),
        (produce, 9),
        (fetch, 4),
        (fetch, 12),
    ]


def request_frame(message: object, version: int) -> bytes:
    schema = SCHEMAS[type(message)]
    w = Writer()
    header = RequestHeader(request_api_key=schema.api_key, request_api_version=version, correlation_id=1,
                           client_id="fuzz")  # fmt: skip
    encode_request_header(w, header, request_header_version(schema, version))
    return encode_frame(bytes(w.out) + encode(message, version))


def seeds() -> dict[str, list[bytes]]:
    index = {cv: i for i, cv in enumerate(MESSAGES)}
    return {
        # chunk size byte, then frames
        "frames": [bytes([7]) + request_frame(m, v) for m, v in requests()]
        + [bytes([63]) + b"".join(request_frame(m, v) for m, v in requests())],
        "codec": [struct.pack(">H", index[(type(m), v)]) + encode(m, v) for m, v in requests()],
        "records": [batch(c) for c in sorted(compression.CODEC_NAMES)]
        + [batch(compression.NONE, 1) + batch(compression.ZSTD, 5)],
    }


def main() -> None:
    for target, inputs in seeds().items():
        directory = CORPUS / target
        directory.mkdir(parents=True, exist_ok=True)
        for data in inputs:
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


if __name__ == "__main__":
    main()
