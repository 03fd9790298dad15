"""Robustness run: `difforacle diff` over many consecutive real commits, counting how runs end.

Unlike the real-change benchmark (real_changes/), nothing here is labelled: the question is
only whether the engine survives real code. Per library of the real-change manifest whose
mirror is present, the newest commits (first parent, no merges) that change Python files of
the library's packages are each compared with their parent at a short budget, with the
library's test-time dependencies installed as in the benchmark. A run ends in one of:
exit 0 (no difference), 1 (differences), 2 (a setup problem, or an internal error: stderr
says `internal error`), or a time-out. The results are resumable JSON and a Markdown table.

    python benchmarks/robustness.py --mirrors /work/.mirror --work /tmp/robust \\
        --libraries python-poetry/tomlkit,kjd/idna --commits 40 --budget 20 --out robust.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "real_changes"))

from run import (  # the benchmark's own helpers, next to this script
    BenchError,
    Repository,
    clone_mirror,
    ensure_venv,
    find_mirror,
    git,
    load_manifest,
    run,
    tail,
)

MANIFEST = Path(__file__).resolve().parent / "real_changes" / "manifest.toml"
SCHEMA = "difforacle.robustness/1"


def recent_commits(clone: Path, repository: Repository, count: int) -> list[str]:
    """The newest `count` single-parent commits on the first-parent line that change Python files of
    the library's packages (git's pathspec `*` spans folders), newest first."""
    source = repository.source.rstrip("/")
    roots = [f"{source}/{package}".removeprefix("./") for package in repository.packages]
    log = git(clone, "log", "--first-parent", "--no-merges", "--format=%H", "HEAD", "--",
              *(f"{root}/*.py" for root in roots), *(f"{root}.py" for root in roots))
    return [commit for commit in log.split() if commit][:count]


def run_one(command: list[str], clone: Path, commit: str, interpreter: Path, budget: float,
            seed: int) -> dict[str, Any]:
    """One run on `commit` against its parent: exit status, time, and the error line if any."""
    with tempfile.TemporaryDirectory(prefix="difforacle-robust-") as tmp:
        report = Path(tmp) / "report.json"
        result = run([*command, "diff", "--repo", clone, "--base", f"{commit}^", "--head", commit,
                      "--budget", f"{budget:g}", "--seed", str(seed), "--json", report,
                      "--python", interpreter, "--quiet"],
                     cwd=clone, timeout=2 * budget + 180)
        entry: dict[str, Any] = {"exit": result.returncode, "seconds": result.seconds,
                                 "report": report.is_file()}
    if result.returncode not in (0, 1):
        entry["error"] = tail(result.stderr, 1) if result.returncode != -1 else "timed out"
    entry["internal"] = any(sign in result.stderr for sign in ("internal error", "Traceback (most recent"))
    return entry


def summarize(results: dict[str, Any]) -> str:
    """The Markdown table: per library and overall, runs, exits by code, internal errors, seconds."""
    rows = ["| library | runs | exit 0 | exit 1 | exit 2 | timed out | internal errors | median s |",
            "|---|---|---|---|---|---|---|---|"]
    everything: list[dict[str, Any]] = []
    for library, entries in sorted(results["libraries"].items()):
        runs = list(entries.values())
        everything += runs
        rows.append(_row(library, runs))
    rows.append(_row("**all**", everything))
    errors = [f"- {library} {commit[:10]}: exit {entry['exit']}: {entry.get('error', '')}"
              for library, entries in sorted(results["libraries"].items())
              for commit, entry in entries.items() if entry["internal"] or entry["exit"] not in (0, 1)]
    text = "\n".join(rows)
    return text + ("\n\nRuns that did not end in 0 or 1:\n\n" + "\n".join(errors) if errors else "") + "\n"


def _row(name: str, runs: list[dict[str, Any]]) -> str:
    exits = Counter(entry["exit"] for entry in runs)
    internal = sum(entry["internal"] for entry in runs)
    median = f"{statistics.median(e['seconds'] for e in runs):.1f}" if runs else "-"
    return (f"| {name} | {len(runs)} | {exits[0]} | {exits[1]} | {exits[2]} | {exits[-1]} | {internal} | "
            f"{median} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of bare git mirrors")
    parser.add_argument("--work", type=Path, required=True, help="clones and venvs (reused)")
    parser.add_argument("--libraries", default="", help="owner/name list, comma separated (default: all)")
    parser.add_argument("--commits", type=int, default=40, help="commits per library (default: 40)")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--difforacle", default="difforacle", help="the command to run (default: difforacle)")
    parser.add_argument("--python", default=sys.executable, help="makes the libraries' venvs")
    parser.add_argument("--out", type=Path, required=True, help="results JSON (resumed when it exists)")
    parser.add_argument("--markdown", type=Path, help="where to write the table")
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(MANIFEST)
        wanted = [name for name in args.libraries.split(",") if name] or sorted(manifest.repositories)
        unknown = [name for name in wanted if name not in manifest.repositories]
        if unknown:
            raise BenchError(f"not in the manifest: {', '.join(unknown)}")
        results = (json.loads(args.out.read_text()) if args.out.is_file()
                   else {"schema": SCHEMA, "budget": args.budget, "seed": args.seed, "libraries": {}})
        command = shlex.split(args.difforacle)
        for name in wanted:
            mirror = find_mirror(args.mirrors, name)
            if mirror is None:
                print(f"{name}: no mirror under {args.mirrors}, skipped", flush=True)
                continue
            repository = manifest.repositories[name]
            clone = clone_mirror(mirror, args.work / "repos" / name.replace("/", "+"))
            interpreter = ensure_venv(args.work, args.python, repository.dependencies)
            done = results["libraries"].setdefault(name, {})
            for commit in recent_commits(clone, repository, args.commits):
                if commit in done:
                    continue
                done[commit] = entry = run_one(command, clone, commit, interpreter, args.budget, args.seed)
                print(f"{name} {commit[:10]} exit {entry['exit']} {entry['seconds']:6.1f}s"
                      + (f"  {entry['error']}" if "error" in entry else ""), flush=True)
                args.out.write_text(json.dumps(results, indent=1) + "\n")
    except BenchError as error:
        print(f"robustness: {error}", file=sys.stderr)
        return 2
    table = summarize(results)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
