"""The fault suite (tests/faults/): scenarios marked `long_faults` run only when KBROKER_LONG_FAULTS=1 (the soak
command `scripts/kbroker-faults` and `scripts/test tests/faults --long-faults`-style runs set it); without it they are
deselected, not skipped, so the default suite (`.ci/run`) stays within its time budget."""

from __future__ import annotations

import os

import pytest

LONG_FAULTS_ENV = "KBROKER_LONG_FAULTS"


def long_faults_enabled() -> bool:
    return os.environ.get(LONG_FAULTS_ENV) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if long_faults_enabled():
        return
    deselected = [item for item in items if item.get_closest_marker("long_faults") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.get_closest_marker("long_faults") is None]
