"""Replication: each partition's leader and its in-sync followers (docs/cluster.md, "Replication").

manager.py (roles from metadata snapshots), partition_leader.py (ISR and high watermark rules), fetcher.py (the
follower side), client.py (our own Kafka client), checkpoint.py (high watermarks on disk), topics_tool.py
(`kbroker topics`).
"""
