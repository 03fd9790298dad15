"""Large files: a pull request that changes one value of a big generated table module, beside a big
data file, run at a short budget. How long does each phase take, does the run stay within budget
+ 10 s, is the changed entry reported, and does the report contradict itself about the line?

The repository is built here (nothing fetched): a package whose `tables/generated.py` is a
module-level dict of N entries (2.4 MB by default, the size of a generated Unicode or locale
table), a lookup function over it, a data file of random bytes (19 MB by default) that the
package reads nothing of, and a few commits of history. The head commit changes one entry's
value. The run is `difforacle diff --budget B` under this interpreter, timed from outside; its
progress lines are timestamped as they arrive, so the phase before exploring that took longest
is named.

    python benchmarks/large_table.py --budget 20 --runs 3 --out /tmp/large-table.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOOKUP = '''"""Names of the generated table, looked up."""

from .generated import TABLE


def code_of(name: str) -> int | None:
    """The code the table gives `name`, or None."""
    entry = TABLE.get(name)
    return None if entry is None else entry[0]


def category_of(name: str) -> str:
    """The category the table gives `name` ("" if it has none)."""
    entry = TABLE.get(name)
    return "" if entry is None else entry[1]
'''
CATEGORIES = ("letter", "digit", "mark", "symbol", "space", "punctuation")


def table_module(entries: int, changed: int | None = None) -> str:
    """The generated module; with `changed`, that entry's code is one more."""
    rng = random.Random(7)
    lines = ['"""Generated: do not edit."""', "", "TABLE = {"]
    for i in range(entries):
        code = i * 3 + 1 + (1 if i == changed else 0)
        lines.append(f"    'name{i:06d}': ({code}, {CATEGORIES[rng.randrange(len(CATEGORIES))]!r}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def build(repo: Path, table_mb: float, data_mb: float) -> tuple[str, str, int]:
    """The repository; returns base, head and the index of the changed entry."""
    sample = table_module(1000)
    entries = int(table_mb * 1e6 / (len(sample) / 1000))  # as many entries as make the size asked
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "tables").mkdir()
    (repo / "tables" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "tables" / "lookup.py").write_text(LOOKUP, encoding="utf-8")
    (repo / "tables" / "generated.py").write_text(table_module(entries), encoding="utf-8")
    (repo / "pyproject.toml").write_text('[project]\nname = "tables"\nversion = "1.0"\n', encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Generated tables")
    (repo / "tables" / "names.dat").write_bytes(random.Random(3).randbytes(int(data_mb * 1e6)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add the names data file")
    for n in range(3):  # a little history for the defect scores
        (repo / "NOTES.md").write_text(f"notes {n}\n", encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"Notes {n}")
    base = git(repo, "rev-parse", "HEAD")
    changed = entries // 2
    (repo / "tables" / "generated.py").write_text(table_module(entries, changed), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "Regenerate the tables")
    return base, git(repo, "rev-parse", "HEAD"), changed


def run_once(repo: Path, base: str, head: str, budget: float, out: Path) -> dict[str, Any]:
    """One timed run: wall seconds, exit status, progress lines with their arrival times."""
    command = [sys.executable, "-m", "difforacle.bot", "diff", "--repo", str(repo), "--base", base,
               "--head", head, "--budget", f"{budget:g}", "--json", str(out)]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    assert process.stderr is not None
    lines = [(round(time.monotonic() - started, 2), line.rstrip()) for line in process.stderr]
    status = process.wait()
    return {"seconds": round(time.monotonic() - started, 2), "exit": status, "progress": lines}


def judge(report: dict[str, Any], changed: int) -> dict[str, Any]:
    """Whether the changed entry is reported, and whether the report says both that a changed line
    ran (its coverage) and that none did (its headline)."""
    from difforacle.bot.markdown import render_markdown

    name = f"name{changed:06d}"
    texts = [json.dumps(d) for d in report.get("differences", [])]
    coverage = report.get("coverage", {})
    ran = coverage.get("changed_lines_covered", 0)
    headline = render_markdown(report).splitlines()[2] if report else ""
    return {"differences": len(texts), "entry_reported": any(name in t for t in texts),
            "changed_lines": coverage.get("changed_lines"), "changed_lines_covered": ran,
            "headline": headline, "contradiction": bool(ran) and "none of the" in headline,
            "notes": report.get("notes", [])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--table-mb", type=float, default=2.4)
    parser.add_argument("--data-mb", type=float, default=19.0)
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="difforacle-large-table-") as tmp:
        repo = Path(tmp) / "repo"
        base, head, changed = build(repo, args.table_mb, args.data_mb)
        size = (repo / "tables" / "generated.py").stat().st_size / 1e6
        print(f"table module {size:.1f} MB, data file {args.data_mb:g} MB, entry {changed} changed",
              file=sys.stderr)
        runs = []
        for n in range(args.runs):
            run = run_once(repo, base, head, args.budget, Path(tmp) / f"report-{n}.json")
            report_file = Path(tmp) / f"report-{n}.json"
            report = json.loads(report_file.read_text()) if report_file.exists() else {}
            run.update(judge(report, changed))
            runs.append(run)
            print(f"run {n + 1}: {run['seconds']} s, exit {run['exit']}, entry reported "
                  f"{run['entry_reported']}, contradiction {run['contradiction']}", file=sys.stderr)
    seconds = [r["seconds"] for r in runs]
    summary = {"budget": args.budget, "table_mb": round(size, 2), "data_mb": args.data_mb,
               "median_seconds": statistics.median(seconds), "max_seconds": max(seconds),
               "within_budget_plus_10": all(s <= args.budget + 10 for s in seconds),
               "entry_reported": all(r["entry_reported"] for r in runs),
               "contradictions": sum(r["contradiction"] for r in runs), "runs": runs}
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
