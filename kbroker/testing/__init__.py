"""Tools for testing kbroker (and any Kafka-compatible broker) from the outside; no pytest needed."""
