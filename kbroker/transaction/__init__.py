"""The transaction coordinator (KIP-98, KIP-447): `__transaction_state`, the state machine, markers, timeouts.

metadata.py     TransactionMetadata: one transactional id's state and its legal transitions (plain sync code)
records.py      the `__transaction_state` record format (Kafka's bytes)
coordinator.py  TransactionCoordinator: every transactional id of the partitions we lead, one sync method per API
markers.py      writing COMMIT/ABORT markers on the partitions this node leads (WriteTxnMarkers' work)
service.py      TransactionService: the topic, ownership after failover, log writes, marker sending, timers
"""
