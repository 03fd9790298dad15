"""Benchmark: sequences executed per second on base (the exploration phase), per subject.

Not a test (pytest does not collect it): throughput depends on the machine and its load,
so it is measured here and reported, never asserted. Runs `difforacle diff` in-process
on the shared benchmark corpus (built by ../shared/bench/build_corpus.py) for each
subject's first refactor case (a behaviour-preserving edit of one function: the whole
pipeline runs, nothing is reported), several times, and prints the median exploration
throughput per subject and over subjects.

    python benchmarks/throughput.py [--budget 20] [--runs 3] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkout_code import use_this_checkout

use_this_checkout()

from difforacle.generator import Options, analyze  # noqa: E402

CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "pr-regression-bench"))
DEFAULT_CORPUS = CACHE / "corpus"
SUBJECTS = ("inflection", "semver", "cachetools")


def measure(repo: Path, head: str, budget: float, seed: int) -> float:
    report = analyze(repo, "base", head, Options(budget=budget, seed=seed))
    return report.stats.sequences / report.stats.explore_seconds if report.stats.explore_seconds else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--case", default="r001", help="case id suffix to run on (default: r001)")
    args = parser.parse_args()
    medians = {}
    for subject in SUBJECTS:
        repo = args.corpus / subject / "repo"
        if not repo.exists():
            print(f"{subject}: no corpus at {repo} (run ../shared/bench/build_corpus.py)", file=sys.stderr)
            continue
        head = f"case/{subject}-{args.case}"
        rates = [measure(repo, head, args.budget, seed) for seed in range(args.runs)]
        medians[subject] = statistics.median(rates)
        runs = ", ".join(f"{r:.0f}" for r in rates)
        print(f"{subject:12s} runs {runs}  median {medians[subject]:.0f} seq/s")
    if medians:
        overall = statistics.median(medians.values())
        print(f"median over subjects: {overall:.0f} sequences per second on base")
        print(json.dumps({"per_subject": medians, "median": overall}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
