"""Run a coverage-guided fuzzing target under atheris (libFuzzer) for a while:

    .venv/bin/python -m tests.fuzz.run records --minutes 10     # scripts/kbroker-fuzz runs every target

New inputs go to a working corpus outside the clone (~/.cache/kbroker/fuzz/<target>/), seeded from the committed one
(tests/fuzz/corpus/<target>/). libFuzzer keeps only inputs that reached new coverage, reduced: copy the working corpus
into the committed one to keep what a long run found. A crash is written to
~/.cache/kbroker/fuzz/crashes/<target>-crash-<hash> and fails the run; fix the bug and copy the input into the
committed corpus: CI replays it (tests/test_fuzz_corpus.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import atheris

WORK = Path.home() / ".cache" / "kbroker" / "fuzz"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=["frames", "codec", "records"])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--rss-limit-mb", type=int, default=1024, help="memory past this is a finding")
    args = parser.parse_args()
    with atheris.instrument_imports(include=["protocol"]):
        from tests.fuzz.targets import CORPUS, TARGETS
    work = WORK / args.target
    work.mkdir(parents=True, exist_ok=True)
    (WORK / "crashes").mkdir(exist_ok=True)
    libfuzzer = [
        sys.argv[0],
        str(work),
        str(CORPUS / args.target),
        f"-max_total_time={max(1, int(args.minutes * 60))}",
        f"-rss_limit_mb={args.rss_limit_mb}",
        "-timeout=10",
        "-max_len=65536",
        "-print_final_stats=1",
        f"-artifact_prefix={WORK / 'crashes' / args.target}-",
    ]
    atheris.Setup(libfuzzer, TARGETS[args.target])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
