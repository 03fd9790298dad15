"""Benchmark: the ablation table of the generation components (see generator/components.py).

Not a test (pytest does not collect it). Runs the shared harness (../shared/bench) on the
mutant cases once with the default components and once with each switched off (or, for one
that is off by default, on), for several
seeds, through `shared_reports.py` (so every JSON report is kept), then tabulates per
configuration the detection rate on the mutants the library's own tests catch and the
changed-line and branch coverage and the sequences executed on the mutant cases. With
`--false-positives` it runs the refactor and self cases instead, all components on, where
any detection is a false alarm.

    python benchmarks/ablation.py run --budget 30 --seeds 1,2,3 [--configs all,types,...] [--limit N]
                                       [--only a,b] [--out DIR]
    python benchmarks/ablation.py run --budget 30 --seeds 1,2,3 --false-positives [--out DIR]
    python benchmarks/ablation.py table [--out DIR] [--peers ../shared/bench/results/*.json]

Runs one harness process at a time (timings are wall-clock on 2 cores), resumes where it
stopped (the harness skips cases already in its --out file), and runs the code of the
checkout this script lives in: pin a worktree to the commit you measure. `--configs` picks
some configurations, so that the work can be split between processes; give each process its
own copy of the corpus (`BENCH_CACHE`), since every run adds worktrees to the corpus repository.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from checkout_code import use_this_checkout  # noqa: E402

use_this_checkout()

from difforacle.generator.generation.techniques import NAMES, OFF_BY_DEFAULT  # noqa: E402

BENCH = HERE.parents[1] / "shared" / "bench"  # beside the project's checkout; --bench elsewhere
HARNESS_PYTHON = Path("~/.cache/pr-regression-bench/harness/bin/python").expanduser()
SUBJECTS = "inflection,semver,cachetools"
CONFIGS = ("all", *NAMES)


def run(args: argparse.Namespace) -> int:
    """The mutant cases per seed and configuration; with `--false-positives`, instead every
    refactor and self case per seed with all components on (any detection there is false)."""
    for seed in args.seeds:
        if args.false_positives:
            runs = [(f"fp-s{seed}", f"--seed {seed}", "refactor,self", 0)]
        else:
            runs = [(f"{config}-s{seed}", f"--seed {seed}" + _switch(config), "mutant", args.limit)
                    for config in args.configs]
        for name, extra, kinds, limit in runs:
            print(f"== {name}: {extra}", flush=True)
            status = _harness(args, name, extra, kinds, limit)
            if status != 0:
                print(f"bench_ablation: the harness failed ({status}) on {name}", file=sys.stderr)
                return 2
    return 0


def _switch(config: str) -> str:
    """The option that makes `config` differ from the defaults."""
    if config == "all":
        return ""
    return f" --enable {config}" if config in OFF_BY_DEFAULT else f" --disable {config}"


def _harness(args: argparse.Namespace, name: str, extra: str, kinds: str, limit: int) -> int:
    """One harness process over the selected cases; its JSON goes to OUT/NAME.json, reports to OUT/NAME/."""
    out = Path(args.out)
    env = {**os.environ, "DIFFORACLE": f"{sys.executable} {HERE / 'shared_reports.py'}",
           "DIFFORACLE_EXTRA_ARGS": extra, "DIFFORACLE_KEEP_REPORTS": str(out / name)}
    command = [str(HARNESS_PYTHON), "run.py", "--tool", "difforacle", "--budget", str(args.budget),
               "--kinds", kinds, "--only", args.only, "--out", str(out / f"{name}.json")]
    if limit:
        command += ["--limit", str(limit)]
    return subprocess.run(command, cwd=args.bench, env=env, check=False).returncode


def table(args: argparse.Namespace) -> str:
    """Per configuration: detection per seed and pooled, then what the kept reports show,
    pooled over seeds and cases: changed lines and branches covered (sums, so a case with many
    changed lines weighs more), the median number of sequences executed and the median wall
    time per case. Then the killed mutants each configuration missed, and the peers' figures
    (`--peers FILE...`, harness JSON) on exactly the cases measured here."""
    out = Path(args.out)
    rows = ["| configuration | detected / killed mutants (per seed) | pooled | changed lines covered "
            "| changed branches covered | sequences (median) | s per case (median) |",
            "|---|---|---|---|---|---|---|"]
    missed: list[str] = []
    for config in CONFIGS:
        per_seed, detected, killed = [], 0, 0
        lines, branches, sequences, seconds = [0, 0], [0, 0], [], []
        config_missed: list[str] = []
        for result in sorted(out.glob(f"{config}-s*.json")):
            cases = json.loads(result.read_text())["cases"]
            found = sum(c["detected"] for c in cases.values() if c.get("killed"))
            total = sum(1 for c in cases.values() if c.get("killed"))
            per_seed.append(f"{found}/{total}")
            detected, killed = detected + found, killed + total
            seed = result.stem.rsplit("-", 1)[1]
            config_missed += [f"{case} ({seed})" for case, c in cases.items()
                              if c.get("killed") and not c["detected"]]
            seconds += [c["seconds"] for c in cases.values()]
            for report in (out / result.stem).glob("*.json"):
                data = json.loads(report.read_text())
                coverage = data["coverage"]
                lines[0] += coverage.get("changed_lines_covered", 0)
                lines[1] += coverage.get("changed_lines", 0)
                branches[0] += coverage.get("changed_branches_covered", 0)
                branches[1] += coverage.get("changed_branches", 0)
                sequences.append(data["stats"]["sequences"])
        if not per_seed:
            continue
        label = _label(config)
        rows.append(f"| {label} | {', '.join(per_seed)} | {detected}/{killed} ({_percent(detected, killed)}) "
                    f"| {lines[0]}/{lines[1]} ({_percent(*lines)}) "
                    f"| {branches[0]}/{branches[1]} ({_percent(*branches)}) "
                    f"| {_median(sequences, '.0f')} | {_median(seconds, '.1f')} |")
        missed.append(f"- {label}: {', '.join(config_missed) or 'none'}")
    text = "\n".join(rows) + "\n\nKilled mutants missed (seed):\n" + "\n".join(missed)
    text += "\n\n" + _false_positives(out)
    if args.peers:
        text += "\n\n" + _peer_table(out, args.peers)
    return text


def _false_positives(out: Path) -> str:
    """The refactor and self cases detected (false alarms), per seed, with all components on."""
    per_seed = []
    for result in sorted(out.glob("fp-s*.json")):
        cases = json.loads(result.read_text())["cases"]
        alarms = sorted(case for case, c in cases.items() if c["detected"])
        per_seed.append(f"{result.stem.removeprefix('fp-')}: {len(alarms)}/{len(cases)}"
                        + (f" ({', '.join(alarms)})" if alarms else ""))
    return ("False positives on the refactor and self cases, all components: "
            + ("; ".join(per_seed) or "not run"))


def _peer_table(out: Path, peers: list[Path]) -> str:
    """The peers' detection on the killed mutants measured here (a peer may not have run them all)."""
    ours: dict[str, bool] = {}
    for result in out.glob("all-s*.json"):
        for case, c in json.loads(result.read_text())["cases"].items():
            ours[case] = bool(c.get("killed"))
    rows = ["| tool (file) | detected / killed mutants | cases it ran | s per case (median) |",
            "|---|---|---|---|"]
    for path in peers:
        data = json.loads(path.read_text())
        cases = {case: c for case, c in data["cases"].items() if case in ours}
        killed = [c for case, c in cases.items() if ours[case]]
        detected = sum(c["detected"] for c in killed)
        seconds = [c["seconds"] for c in cases.values()]
        rows.append(f"| {data.get('tool', path.stem)} ({path.name}) | {detected}/{len(killed)} "
                    f"({_percent(detected, len(killed))}) | {len(cases)} of {len(ours)} "
                    f"| {_median(seconds, '.1f')} |")
    return "\n".join(rows)


def _label(config: str) -> str:
    if config == "all":
        return "all components"
    return f"with {config}" if config in OFF_BY_DEFAULT else f"without {config}"


def _median(values: list[float], spec: str) -> str:
    return format(statistics.median(values), spec) if values else "n/a"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _configs(text: str) -> list[str]:
    chosen = [name.strip() for name in text.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(CONFIGS))
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown configuration {', '.join(unknown) or '(none)'}; "
                                         f"choose from {','.join(CONFIGS)}")
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run")
    runner.add_argument("--budget", type=float, default=30)
    runner.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    runner.add_argument("--configs", type=_configs, default=list(CONFIGS),
                        help=f"comma-separated, from {','.join(CONFIGS)} (default: all of them)")
    runner.add_argument("--false-positives", action="store_true",
                        help="run the refactor and self cases (all of them) with all components instead")
    runner.add_argument("--limit", type=int, default=0, help="the first N mutants per subject (0: all)")
    runner.add_argument("--only", default=SUBJECTS)
    runner.add_argument("--out", default="/tmp/ablation")
    runner.add_argument("--bench", type=Path, default=BENCH, help=f"the harness (default: {BENCH})")
    tabulate = commands.add_parser("table")
    tabulate.add_argument("--out", default="/tmp/ablation")
    tabulate.add_argument("--peers", type=Path, nargs="*", default=[],
                          help="harness JSON files of other tools, compared on the same cases")
    args = parser.parse_args()
    if args.command == "run":
        if not (args.bench / "run.py").exists():
            print(f"bench_ablation: no harness at {args.bench}; pass --bench DIR", file=sys.stderr)
            return 2
        if not HARNESS_PYTHON.exists():
            print(f"bench_ablation: no harness venv at {HARNESS_PYTHON} (see {BENCH}/README.md)",
                  file=sys.stderr)
            return 2
        return run(args)
    print(table(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
