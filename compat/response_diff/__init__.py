"""Response diffs against Apache Kafka (compat/test_response_diff.py runs them).

- `world.py`: the state both brokers are brought into first (topics, records with fixed timestamps, groups in every
  state), by the same requests.
- `table.py`: the rows, each a request sent at every version both brokers advertise.
- `peer.py`: one broker's connection (our own codec) and what the masks need to know of it.
- `compare.py`: decoded answers as plain trees, the masks (each with its reason), field-by-field differences.
- `known.py`: the differences from Kafka that docs/kafka-differences.md lists, by id (`diff:ID`).
- `run.py`: one row against both brokers, and the failure report.
"""
