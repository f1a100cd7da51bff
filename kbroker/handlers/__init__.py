"""One module per Kafka API. Importing this package registers every handler (see registry.py)."""

from kbroker.handlers import (  # noqa: F401
    api_versions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_topic_partitions,
    fetch,
    init_producer_id,
    list_offsets,
    metadata,
    produce,
)
