"""Spark's own Kafka connector (`format("kafka")`), run from PySpark by compat/test_spark.py.

- `install.py`: resolve spark-sql-kafka-0-10 at the installed PySpark's version with mvn, once, into a cache outside
  the clone, and pick the jars PySpark does not ship.
- `session.py`: the one SparkSession of a test session (local mode, bound to 127.0.0.1), stopped by pid.
"""
