"""Benchmark helper: keep every JSON report the bench harness makes, then summarize the tests.

The harness (../shared/bench) runs `difforacle diff ... --json F` per case and deletes F.
Point it at this script to keep a copy of each report, then summarize the copies:

    export DIFFORACLE_KEEP_REPORTS=/tmp/reports
    DIFFORACLE="python $PWD/benchmarks/shared_reports.py" $PY run.py --tool difforacle --budget 30 \
        --out r.json
    python benchmarks/shared_reports.py summarize /tmp/reports

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
from figures import percentile

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


def mutant_coverage(folder: Path, pattern: str = "*-m[0-9]*.json") -> dict[str, dict]:
    """Report name -> its `coverage` object, for the reports matching `pattern` (default: the
    mutant cases), each file read once."""
    return {path.stem: json.loads(path.read_text())["coverage"] for path in sorted(folder.glob(pattern))}


def _ratio(counts: dict, measured: str) -> float | None:
    """covered / total of `changed_<measured>` in a coverage object or one side of it, None if none."""
    total = counts.get(f"changed_{measured}")
    return counts[f"changed_{measured}_covered"] / total if total else None


def coverage_summary(coverages: dict[str, dict]) -> str:
    """Median and 10th percentile of covered / changed lines, the same for branches (the
    report's own figures, which count the head of a changed file), then for branches on base."""
    columns = {"lines": [], "branches": [], "base branches": []}
    for coverage in coverages.values():
        base = coverage.get("sides", {}).get("base", {})
        ratios = {"lines": _ratio(coverage, "lines"), "branches": _ratio(coverage, "branches"),
                  "base branches": _ratio(base, "branches")}
        for name, ratio in ratios.items():
            if ratio is not None:
                columns[name].append(ratio)
    if not columns["lines"]:
        return "no report with changed lines"

    def figures(ratios: list[float]) -> str:
        low = sorted(ratios)[max(0, -(-len(ratios) // 10) - 1)]  # nearest-rank 10th percentile
        full = sum(r == 1.0 for r in ratios)
        median = 100 * statistics.median(ratios)
        return f"median {median:.0f}%, p10 {100 * low:.0f}%, 100% in {full}/{len(ratios)}"

    text = f"changed-line coverage over {len(columns['lines'])} reports: {figures(columns['lines'])}"
    if columns["branches"]:
        text += f"; branch coverage over {len(columns['branches'])} reports: {figures(columns['branches'])}"
    if columns["base branches"]:  # the same lines before the change: a mutant can make a branch infeasible
        text += (f"; on base, branch coverage over {len(columns['base branches'])} reports: "
                 f"{figures(columns['base branches'])}")
    return text


def untaken_branches(coverages: dict[str, dict]) -> list[str]:
    """One line per report whose head left a branch out of a changed line untaken, `report: path
    from->to, ...` (a mutant changes a file in place, so its head is the side the top-level
    figures count; a negative target is an exit from the function)."""
    found = []
    for name, coverage in coverages.items():
        missed = coverage.get("sides", {}).get("head", {}).get("uncovered_branches", {})
        arcs = [f"{file} {a}->{b}" for file, arcs in sorted(missed.items()) for a, b in arcs]
        if arcs:
            found.append(f"{name}: {', '.join(arcs)}")
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["summarize"]:
        print(summarize(Path(sys.argv[2])))
        coverages = mutant_coverage(Path(sys.argv[2]))
        print(coverage_summary(coverages))
        for line in untaken_branches(coverages):
            print(f"  untaken: {line}")
    else:
        sys.exit(run_and_keep(sys.argv[1:]))
