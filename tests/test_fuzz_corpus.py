"""Replay the fuzzing corpus (tests/fuzz/corpus/<target>/: seeds and inputs the fuzzer found worth keeping, findings
among them once fixed) through its atheris target (tests/fuzz/targets.py): none may raise what the target does not
allow. `scripts/kbroker-fuzz --minutes N` is the fuzzer itself."""

from __future__ import annotations

import pytest

from tests.fuzz.targets import CORPUS, TARGETS

pytestmark = pytest.mark.timeout(120)

INPUTS = sorted(CORPUS.glob("*/*"))


def test_every_target_has_a_corpus() -> None:
    assert {p.parent.name for p in INPUTS} == set(TARGETS)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_corpus_replays(target: str) -> None:
    inputs = sorted((CORPUS / target).iterdir())
    for path in inputs:
        try:
            TARGETS[target](path.read_bytes())
        except Exception as exc:
            raise AssertionError(f"{path}: {exc!r}") from exc
