"""Producer ids that stay unique across restarts: reserve them in blocks and persist the end of the block first.

Kafka allocates producer id blocks through its controller; a single node reserves 1000 at a time in a file, written
atomically before any id of the block is handed out, so a crash can only skip ids, never reuse one.
"""

from __future__ import annotations

from pathlib import Path

from kbroker.topics import write_file_atomically

BLOCK_SIZE = 1000


class ProducerIdBlock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.next = int(path.read_text().strip()) if path.exists() else 0
        self.end = self.next

    def next_id(self) -> int:
        if self.next >= self.end:
            self.end = self.next + BLOCK_SIZE
            write_file_atomically(self.path, f"{self.end}\n".encode())
        pid = self.next
        self.next += 1
        return pid
