"""Leader epoch cache: for each leader epoch, the first offset written in it (Kafka's LeaderEpochFileCache).

Followers and consumers use it (OffsetForLeaderEpoch) to find where their copy of the log diverged after a leader
change. It is persisted in `leader-epoch-checkpoint`, in Kafka's text format (version line, count line, then one
"epoch start_offset" line per entry), rewritten atomically on every change. Changes happen once per leadership
change, so fsyncing each one is cheap.
"""

from __future__ import annotations

import bisect
from pathlib import Path

from kbroker.log.files import replace_file

CHECKPOINT_FILE = "leader-epoch-checkpoint"
_VERSION = 0
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    def __init__(self, directory: Path) -> None:
        self.path = directory / CHECKPOINT_FILE
        # (epoch, start_offset), both strictly increasing
        self.entries: list[tuple[int, int]] = self._read()

    def _read(self) -> list[tuple[int, int]]:
        try:
            lines = self.path.read_text().split("\n")
        except FileNotFoundError:
            return []
        try:
            if int(lines[0]) != _VERSION:
                raise ValueError(f"unknown version {lines[0]!r}")
            count = int(lines[1])
            entries = []
            for line in lines[2 : 2 + count]:
                epoch, start_offset = line.split()
                entries.append((int(epoch), int(start_offset)))
        except (ValueError, IndexError) as e:
            # The file is only ever replaced whole, so this is disk damage; the epochs are rebuilt from the
            # batches' partition_leader_epoch by the caller if it needs them.
            raise ValueError(f"corrupt {self.path}: {e}") from e
        if len(entries) != count:
            raise ValueError(f"corrupt {self.path}: {len(entries)} entries, header says {count}")
        return entries

    def _write(self, entries: list[tuple[int, int]], durable: bool = True) -> None:
        """Write `entries` to the file, then make them the cache's: if the write fails (a full disk), the cache
        stays what the file says."""
        lines = [str(_VERSION), str(len(entries))]
        lines += [f"{epoch} {start_offset}" for epoch, start_offset in entries]
        replace_file(self.path, ("\n".join(lines) + "\n").encode(), fsync=durable, fsync_dir=durable)
        self.entries = entries

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int, *, durable: bool = True) -> bool:
        """Record that `epoch` starts at `start_offset`, if it is newer than the latest epoch. Returns whether the
        cache changed. `durable=False` skips the fsyncs: for an empty log, whose epochs a crash may lose harmlessly
        (no record carries them, and leadership assigns them again).
        """
        if epoch < 0 or epoch <= self.latest_epoch:
            return False
        # An older epoch that started at or after this offset never wrote anything that survives.
        entries = list(self.entries)
        while entries and entries[-1][1] >= start_offset:
            entries.pop()
        entries.append((epoch, start_offset))
        self._write(entries, durable)
        return True

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch whose leader wrote `offset` (UNDEFINED_EPOCH if the cache starts later)."""
        i = bisect.bisect_right(self.entries, offset, key=lambda e: e[1]) - 1
        return self.entries[i][0] if i >= 0 else UNDEFINED_EPOCH

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest epoch <= the requested one, the offset where the next epoch starts, or the
        log end offset for the latest epoch). (-1, -1) when the epoch is undefined or newer than any we know.
        """
        if epoch == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if epoch == self.latest_epoch:
            return epoch, log_end_offset
        higher = bisect.bisect_right(self.entries, epoch, key=lambda e: e[0])
        if higher == len(self.entries):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        next_start = self.entries[higher][1]
        if higher == 0:
            # Older than anything we know: the requester's epoch ended where our first known one starts.
            return epoch, next_start
        return self.entries[higher - 1][0], next_start

    def truncate_from_end(self, end_offset: int) -> None:
        """The log was truncated to end_offset: forget epochs that start at or after it."""
        kept = [e for e in self.entries if e[1] < end_offset]
        if kept != self.entries:
            self._write(kept)

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at start_offset: drop epochs that ended before it, and move the start of the epoch
        that contains it up to it.
        """
        i = bisect.bisect_right(self.entries, start_offset, key=lambda e: e[1]) - 1
        if i < 0:
            return
        kept = [(self.entries[i][0], start_offset), *self.entries[i + 1 :]]
        if kept != self.entries:
            self._write(kept)

    def clear(self) -> None:
        if self.entries:
            self._write([])
