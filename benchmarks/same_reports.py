"""Benchmark script: does a change of the engine's code leave its reports unchanged?

A refactoring must not change what the engine finds. This script runs `difforacle diff` in its
reproducible mode (`--seed 7 --max-sequences 3000`: the run is bound by a count of sequences,
not by time) on a fixed selection of the shared bench's cases and keeps each JSON report;
`compare` then checks two such folders byte for byte, after blanking the figures that measure
time (they differ from run to run whatever the code).

    python benchmarks/same_reports.py record /tmp/before --difforacle /path/to/old/venv/bin/difforacle
    python benchmarks/same_reports.py record /tmp/after
    python benchmarks/same_reports.py compare /tmp/before /tmp/after [--again /tmp/before2]

Some cases are nondeterministic whatever the code (a cache whose entries expire by the wall
clock): record the old code twice and pass the second recording as `--again` to leave them out.
Every run has address space layout randomization switched off (`setarch --addr-no-randomize`,
inherited by the workers): a project value that depends on an address (on Python 3.11,
`hash(None)`, and so the hash of a tuple holding None) differs from process to process, and a
state digest holding one steers the generator's redundancy filter, so two runs of the same code
would part ways.

The cases: per subject of the shared bench (`$BENCH_CACHE`, default
`~/.cache/pr-regression-bench`, built by `../shared/bench/build_corpus.py`), the first two
mutants its own tests kill, the first refactor and the self case, in manifest order
(`--mutants N --refactors M` take more).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "pr-regression-bench"))
SUBJECTS = ("inflection", "semver", "cachetools")
ARGUMENTS = ("--seed", "7", "--max-sequences", "3000", "--quiet")
# Figures that measure time, not behaviour: blanked before comparing.
TIMINGS = ("seconds", "sequences_per_second", "explore_seconds", "history_seconds")
TECHNIQUE_TIMINGS = (("carving", "seconds"), ("solver", "seconds"), ("diffbehavior", "seconds"))
# A report written before the statistics were kept per technique: its flat counters, by technique
# and counter, so that two recordings either side of that change compare (`per_technique`)
FLAT_COUNTERS = {
    "carved": ("carving", "sequences"), "carve_seconds": ("carving", "seconds"),
    "explored_while_carving": ("carving", "explored_before_seeds"), "carved_examples": ("examples", "run"),
    **{f"influence_{name}": ("influence", name) for name in (
        "candidates", "checked", "redundant", "pruned", "pruned_share", "longest_prefix", "reduced")},
    **{f"solver_{name}": ("solver", name) for name in (
        "calls", "seconds", "inputs", "skipped", "new_coverage")},
    **{f"paths_{name}": ("paths", name) for name in (
        "recorded", "distinct", "top_share", "near_misses", "revisited")},
    **{f"divergence_{name}": ("divergence", name) for name in (
        "conditions", "met", "searches", "steps", "boundaries")},
    "catalog_direct": ("direct", "operations"), "catalog_awaited": ("asynchronous", "operations"),
    "catalog_duck_parameters": ("duck", "parameters"), "catalog_settable": ("configured", "attributes"),
}


def selected_cases(manifests: Path, mutants: int = 2, refactors: int = 1,
                   subjects: Sequence[str] = SUBJECTS) -> list[dict]:
    """Per subject: the first `mutants` killed mutants, `refactors` refactors and the self case."""
    chosen = []
    for subject in subjects:
        manifest = json.loads((manifests / f"{subject}.json").read_text())
        cases = manifest["cases"]
        killed = [c for c in cases if c["kind"] == "mutant" and c.get("killed")][:mutants]
        refactor = [c for c in cases if c["kind"] == "refactor"][:refactors]
        itself = [c for c in cases if c["kind"] == "self"][:1]
        for case in [*killed, *refactor, *itself]:
            chosen.append({**case, "subject": subject, "base": manifest["base"]})
    return chosen


def fixed_addresses() -> list[str]:
    """The prefix that runs a command without address space layout randomization (none without setarch)."""
    if shutil.which("setarch") is None:
        print("setarch not found: runs keep address randomization and may differ", file=sys.stderr)
        return []
    return ["setarch", platform.machine(), "--addr-no-randomize"]


def record(folder: Path, command: list[str], cases: list[dict], extra: Sequence[str] = ()) -> int:
    """Run every case, keeping its report in `folder`; `extra`: more arguments for each run (a
    component switched on or off, to compare code that runs only then)."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [*fixed_addresses(), *command]
    statuses = {}
    for case in cases:
        repo = CACHE / "corpus" / case["subject"] / "repo"
        report = folder / f"{case['id']}.json"
        started = time.monotonic()
        completed = subprocess.run([*command, "diff", "--repo", str(repo), "--base", case["base"],
                                    "--head", case["head"], "--json", str(report), *ARGUMENTS, *extra],
                                   capture_output=True, text=True)
        statuses[case["id"]] = completed.returncode
        seconds = time.monotonic() - started
        print(f"{case['id']:<20} exit {completed.returncode}  {seconds:5.1f} s", flush=True)
        if completed.returncode not in (0, 1):
            print(completed.stderr.strip().splitlines()[-1:], file=sys.stderr)
    (folder / "exit-statuses.json").write_text(json.dumps(statuses, indent=1, sort_keys=True) + "\n")
    return 0


def normalized(path: Path, unknown: Sequence[str] = ()) -> str:
    """The report's JSON text with the timing figures blanked, its technique counters per
    technique (`per_technique`) less those whose counts are all 0 and those of the techniques
    `unknown` to one of the two versions compared (counters it did not have)."""
    data = json.loads(path.read_text())
    stats = data.get("stats", {})
    per_technique(stats)
    if "techniques" in stats:
        stats["techniques"] = {technique: counters for technique, counters in stats["techniques"].items()
                               if any(counters.values()) and technique not in unknown}
    for name in TIMINGS:
        if name in stats:
            stats[name] = "<time>"
    for technique, name in TECHNIQUE_TIMINGS:
        if name in stats.get("techniques", {}).get(technique, {}):
            stats["techniques"][technique][name] = "<time>"
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def per_technique(stats: dict) -> None:
    """An older report's flat technique counters moved under `techniques` (FLAT_COUNTERS). It
    wrote every counter, a technique's that was off too, where a newer one leaves that technique
    out: `normalized` leaves out, on both sides, a technique whose counts are all 0."""
    if not any(name in stats for name in FLAT_COUNTERS):
        return
    techniques: dict[str, dict] = {}
    for name, (technique, counter) in FLAT_COUNTERS.items():
        if name in stats:
            techniques.setdefault(technique, {})[counter] = stats.pop(name)
    stats["techniques"] = techniques


def compare(before: Path, after: Path, again: Path | None = None, unknown: Sequence[str] = ()) -> int:
    """Compare the reports of `after` with those of `before`. With `again` (a second recording of
    the old code), a case whose two old reports differ is nondeterministic whatever the code:
    it is listed, not compared."""
    names = sorted(p.name for p in before.glob("*.json") if p.name != "exit-statuses.json")
    if not names:
        print(f"no reports in {before}", file=sys.stderr)
        return 2
    different = unstable = 0
    for name in names:
        other = after / name
        if not other.exists():
            print(f"{name:<28} missing in {after}")
            different += 1
            continue
        old, new = normalized(before / name, unknown), normalized(other, unknown)
        if again is not None and (again / name).exists() and normalized(again / name, unknown) != old:
            unstable += 1
            print(f"{name:<28} not compared: two runs of the old code differ (nondeterministic case)")
            continue
        if old == new:
            print(f"{name:<28} same")
            continue
        different += 1
        print(f"{name:<28} DIFFERENT")
        sys.stdout.writelines(list(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                        str(before / name), str(other), n=1))[:40])
    compared = len(names) - unstable
    print(f"{compared - different} of {compared} reports the same (timings aside)"
          + (f"; {unstable} nondeterministic case(s) not compared" if unstable else ""))
    return 1 if different else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run the cases and keep their reports in FOLDER")
    rec.add_argument("folder", type=Path)
    rec.add_argument("--difforacle", default="difforacle", help="the command to run (default: difforacle)")
    rec.add_argument("--manifests", type=Path, default=BENCH / "manifests")
    rec.add_argument("--mutants", type=int, default=2, help="killed mutants per subject (default: 2)")
    rec.add_argument("--refactors", type=int, default=1, help="refactors per subject (default: 1)")
    rec.add_argument("--subjects", default=",".join(SUBJECTS),
                     help=f"the subjects, comma-separated (default: {','.join(SUBJECTS)})")
    rec.add_argument("--args", default="", metavar="ARGS",
                     help="more arguments for every run, e.g. '--disable carving' or '--enable paths'")
    cmp = commands.add_parser("compare", help="compare two folders of reports, timings aside")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    cmp.add_argument("--again", type=Path, metavar="FOLDER",
                     help="a second recording of the old code: cases whose two reports differ are skipped")
    cmp.add_argument("--unknown", default="", metavar="NAMES",
                     help="techniques whose counters one of the two versions did not have, comma-separated "
                          "(their counters are not compared)")
    args = parser.parse_args(argv)
    if args.command == "record":
        cases = selected_cases(args.manifests, args.mutants, args.refactors, tuple(args.subjects.split(",")))
        return record(args.folder, shlex.split(args.difforacle), cases, shlex.split(args.args))
    return compare(args.before, args.after, args.again, [n for n in args.unknown.split(",") if n])


if __name__ == "__main__":
    sys.exit(main())
