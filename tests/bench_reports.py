"""Benchmark helper: keep every JSON report the bench harness makes, then summarize the tests.

The harness (../shared/bench) runs `difforacle diff ... --json F` per case and deletes F.
Point it at this script to keep a copy of each report, then summarize the copies:

    export DIFFORACLE_KEEP_REPORTS=/tmp/reports
    DIFFORACLE="python $PWD/tests/bench_reports.py" $PY run.py --tool difforacle --budget 30 --out r.json
    python tests/bench_reports.py summarize /tmp/reports

The summary gives the size of the reported tests (statements per test: median, 90th
percentile, maximum), how many reported findings pytest reproduced, and the changed-line
(and branch) coverage of the mutant cases (median, 10th percentile), and each mutant case's
branches out of changed lines that no test took (so that each can be read for feasibility).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import statistics
import sys
from pathlib import Path

# The harness drops PYTHONPATH: run the code of the checkout this script lives in (a worktree
# pinned to one commit), not whatever an editable install points at.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkout_code import use_this_checkout

use_this_checkout()

from difforacle.bot.cli import main as difforacle_main  # noqa: E402


def run_and_keep(argv: list[str]) -> int:
    # e.g. DIFFORACLE_EXTRA_ARGS="--disable novelty --seed 2" for an ablation run; argparse
    # keeps the last of a repeated option, so these override the harness's own
    argv = [*argv, *shlex.split(os.environ.get("DIFFORACLE_EXTRA_ARGS", ""))]
    status = difforacle_main(argv)
    keep = os.environ.get("DIFFORACLE_KEEP_REPORTS")
    if keep and "--json" in argv:
        report = Path(argv[argv.index("--json") + 1])
        head = argv[argv.index("--head") + 1]
        repo = Path(argv[argv.index("--repo") + 1]).name if "--repo" in argv else "repo"
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{repo}__{head}") + ".json"
        if report.exists():
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report, Path(keep) / name)
    return status


def percentile(values: list[int], fraction: float) -> float:
    """Nearest-rank percentile: the smallest value with at least `fraction` of values at or below it."""
    ordered = sorted(values)
    rank = max(1, -(-int(fraction * 100) * len(ordered) // 100))
    return ordered[rank - 1]


def summarize(folder: Path) -> str:
    sizes, reproduced, findings, reports = [], 0, 0, 0
    for path in sorted(folder.glob("*.json")):
        reports += 1
        for difference in json.loads(path.read_text())["differences"]:
            findings += 1
            sizes.append(difference["statements"])
            reproduced += difference.get("reproduced") is True
    if not sizes:
        return f"{reports} reports, no findings"
    median = statistics.median(sizes)
    return (f"{reports} reports, {findings} findings; statements per test: median {median:g}, "
            f"p90 {percentile(sizes, 0.9):g}, max {max(sizes)}; reproduced {reproduced}/{findings} "
            f"({100 * reproduced / findings:.0f}%)")


def coverage_summary(folder: Path, pattern: str = "*-m[0-9]*.json") -> str:
    """Changed-line coverage of the reports matching `pattern` (default: the mutant cases):
    median and 10th percentile of covered / changed lines, and the same for branches (the
    report's own figures, which count the head of a changed file), then for branches on base."""
    lines, branches, base_branches = [], [], []
    for path in sorted(folder.glob(pattern)):
        coverage = json.loads(path.read_text())["coverage"]
        if coverage.get("changed_lines"):
            lines.append(coverage["changed_lines_covered"] / coverage["changed_lines"])
        if coverage.get("changed_branches"):
            branches.append(coverage["changed_branches_covered"] / coverage["changed_branches"])
        base = coverage.get("sides", {}).get("base", {})
        if base.get("changed_branches"):
            base_branches.append(base["changed_branches_covered"] / base["changed_branches"])
    if not lines:
        return "no report with changed lines"

    def figures(ratios: list[float]) -> str:
        low = sorted(ratios)[max(0, -(-len(ratios) // 10) - 1)]  # nearest-rank 10th percentile
        full = sum(r == 1.0 for r in ratios)
        median = 100 * statistics.median(ratios)
        return f"median {median:.0f}%, p10 {100 * low:.0f}%, 100% in {full}/{len(ratios)}"

    text = f"changed-line coverage over {len(lines)} reports: {figures(lines)}"
    if branches:
        text += f"; branch coverage over {len(branches)} reports: {figures(branches)}"
    if base_branches:  # the same lines before the change: a mutant can make a branch infeasible
        text += f"; on base, branch coverage over {len(base_branches)} reports: {figures(base_branches)}"
    return text


def untaken_branches(folder: Path, pattern: str = "*-m[0-9]*.json") -> list[str]:
    """One line per report matching `pattern` whose head left a branch out of a changed line
    untaken, `report: path from->to, ...` (a mutant changes a file in place, so its head is the
    side the top-level figures count; a negative target is an exit from the function)."""
    found = []
    for path in sorted(folder.glob(pattern)):
        head = json.loads(path.read_text())["coverage"].get("sides", {}).get("head", {})
        arcs = [f"{file} {a}->{b}" for file, missed in sorted(head.get("uncovered_branches", {}).items())
                for a, b in missed]
        if arcs:
            found.append(f"{path.stem}: {', '.join(arcs)}")
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["summarize"]:
        print(summarize(Path(sys.argv[2])))
        print(coverage_summary(Path(sys.argv[2])))
        for line in untaken_branches(Path(sys.argv[2])):
            print(f"  untaken: {line}")
    else:
        sys.exit(run_and_keep(sys.argv[1:]))
