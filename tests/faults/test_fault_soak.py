"""The soak (tests/faults/soak.py) as a long_faults test: random faults for KBROKER_SOAK_MINUTES (default 10) minutes,
judged by the history checker. `scripts/kbroker-faults --minutes 30` runs the same from the command line."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.conftest import missing_tool
from tests.etcd_process import ETCD_BINARY
from tests.faults import netns
from tests.faults.soak import soak

MINUTES = float(os.environ.get("KBROKER_SOAK_MINUTES", "10"))


@pytest.mark.long_faults
@pytest.mark.cluster
@pytest.mark.timeout(int(MINUTES * 60) + 900)
def test_soak(tmp_path: Path) -> None:
    reason = netns.available() or (None if ETCD_BINARY else "etcd is not installed (apt package etcd-server)")
    if reason is not None:
        missing_tool(reason)
    seed = random.randrange(1 << 32)
    totals = soak(MINUTES, rate=20.0, round_minutes=5.0, seed=seed, root=tmp_path)
    print(totals.verdict())
    assert totals.valid, f"seed {seed}:\n{totals.verdict()}"
