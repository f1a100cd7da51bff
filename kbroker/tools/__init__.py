"""Command-line tools over Kafka's protocol: `kbroker topic …` and `kbroker group …` (and the console's client)."""
