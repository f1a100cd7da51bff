"""A clickstream pipeline on Spark over kbroker (or any Kafka), shipped as an example to run, read and copy.

- `events.py`: the events and the exact sequence a seed makes; `generator.py`: produces them at a rate (a CLI).
- `streaming.py`: the Structured Streaming job (de-duplication within a watermark, tumbling and sliding windows,
  Parquet and a results topic, a checkpoint); `batch.py`: the batch report over a time range of the same topic.
- `reference.py`: what the jobs must output, in plain Python; `results.py`: their output read back without Spark.
- `run.py`: generator and streaming job in one command (`scripts/pipeline`); `process.py`: the job as a child
  process, stopped or killed by pid; `spark.py`: the SparkSession and the connector (`kafka` or `kbroker`).

docs/pipeline.md describes what it guarantees and how it is tested.
"""
