"""Benchmark: sequences executed per second on base (the exploration phase), per subject.

Not a test (pytest does not collect it): throughput depends on the machine and its load,
so it is measured here and reported, never asserted. Runs `difforacle diff` in-process
on the shared benchmark corpus (built by ../shared/bench/build_corpus.py) for each
subject's first refactor case (a behaviour-preserving edit of one function: the whole
pipeline runs, nothing is reported), several times, and prints the median exploration
throughput per subject and over subjects. Exploring runs to the deadline (no early stop), so
that each rate is taken over the same stretch.

`--jobs 1 2` compares counts of exploring workers in one run: each subject's runs alternate
between them (seed by seed), so that the machine's load falls on both alike; the ratio of each
count's median to the first's is printed per subject and over subjects.

    python benchmarks/throughput.py [--budget 20] [--runs 3] [--corpus DIR] [--jobs N [N ...]]
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


def measure(repo: Path, head: str, budget: float, seed: int, jobs: int | None = None) -> float:
    report = analyze(repo, "base", head, Options(budget=budget, seed=seed, early_stop=False, jobs=jobs))
    return report.stats.sequences / report.stats.explore_seconds if report.stats.explore_seconds else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--case", default="r001", help="case id suffix to run on (default: r001)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[None], metavar="N",
                        help="counts of exploring workers to compare (default: the engine's own)")
    args = parser.parse_args()
    medians: dict[str, dict[str, float]] = {}
    for subject in SUBJECTS:
        repo = args.corpus / subject / "repo"
        if not repo.exists():
            print(f"{subject}: no corpus at {repo} (run ../shared/bench/build_corpus.py)", file=sys.stderr)
            continue
        head = f"case/{subject}-{args.case}"
        rates: dict[str, list[float]] = {str(jobs): [] for jobs in args.jobs}
        for seed in range(args.runs):
            for jobs in args.jobs:
                rates[str(jobs)].append(measure(repo, head, args.budget, seed, jobs))
        medians[subject] = {jobs: statistics.median(found) for jobs, found in rates.items()}
        for jobs, found in rates.items():
            runs = ", ".join(f"{r:.0f}" for r in found)
            print(f"{subject:12s} jobs {jobs:4s} runs {runs}  median {medians[subject][jobs]:.0f} seq/s")
    if medians:
        first = str(args.jobs[0])
        overall = {str(jobs): statistics.median(m[str(jobs)] for m in medians.values()) for jobs in args.jobs}
        for jobs, rate in overall.items():
            ratios = [m[jobs] / m[first] for m in medians.values() if m[first]]
            ratio = f"; ratio to jobs {first}: median {statistics.median(ratios):.2f}" if ratios else ""
            print(f"median over subjects, jobs {jobs}: {rate:.0f} sequences per second on base{ratio}")
        print(json.dumps({"per_subject": medians, "median": overall}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
