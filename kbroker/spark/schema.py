"""Spark's Kafka schema, as Spark types (what the source declares) and as Arrow types (what its tasks yield).

The columns and types are those of Spark's own connector: key and value binary, topic string, partition int, offset
long, timestamp, timestampType int (0 CreateTime, 1 LogAppendTime) and, with includeHeaders, headers as
array<struct<key: string, value: binary>> (null for a record without headers). Every column is nullable, as there.
The Arrow schema must equal what PySpark derives from the Spark one (it checks each batch's schema), so it is
derived the same way.
"""

from __future__ import annotations

import functools

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def kafka_schema(include_headers: bool) -> StructType:
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


@functools.cache
def arrow_schema(include_headers: bool) -> pa.Schema:
    # PySpark compares a Python source's batches with the schema it derives in UTC; the same call derives ours.
    return to_arrow_schema(kafka_schema(include_headers), timezone="UTC")
