"""`format("kbroker")`: Spark's Kafka source and sink in pure Python, for any Kafka-compatible broker.

    import kbroker.spark
    kbroker.spark.register(spark)
    spark.read.format("kbroker").option("kafka.bootstrap.servers", "127.0.0.1:9092").option("subscribe", "t").load()

A PySpark (4.2+) Python data source that takes the options of Spark's own Kafka connector and speaks the Kafka
protocol through confluent-kafka (librdkafka), so it needs no JVM jar. It needs the `spark` extra (`pip install
kbroker[spark]`: pyspark, pyarrow, confluent-kafka) on the driver and on every executor. docs/spark.md lists the
options and how it differs from Spark's own connector.

The broker never imports this package (tests/test_layering.py), and this package uses nothing of the broker: it is a
Kafka client like any other.
"""

from __future__ import annotations

from typing import Any

from kbroker.spark.source import FORMAT, KafkaDataSource

__all__ = ["FORMAT", "KafkaDataSource", "register"]


def register(spark: Any) -> None:
    """Make `format("kbroker")` available in a SparkSession (`spark.dataSource.register`)."""
    spark.dataSource.register(KafkaDataSource)
