"""Benchmark: what the defect scores' git history costs on real repositories, cold, for several checkouts.

Each case is a real pull request of a mirrored repository (base and head). Its bare mirror is
cloned once into a temporary folder; then, for each checkout of difforacle given (a folder with
its `generator/`, `bot/` and `benchmarks/checkout_code.py`, e.g. a `git archive` of main and this
work tree), `difforacle risk --head --no-cache` runs `--repeat` times in a fresh process: the
history seconds it reports (what `diff` charges to its budget) and the process's wall time,
medians. With `--earlier N`, also the history seconds of a run whose cache was filled at the
base N first-parent commits before (as when the Action restores an earlier base's cache). The
load average at the end says how busy the machine was: the times are wall-clock.

    python benchmarks/history.py --mirrors /work/.mirror --checkout before=/tmp/main \\
        --checkout after=. --repeat 3 --earlier 5

Not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# (repository, base, head): pytest's #14127 (17,666 commits), attrs' #1592 (about 1,800 commits)
CASES = [
    ("pytest-dev/pytest", "5fd2be03b1f8b5eef48d507d001ebf0a82e875a1^1",
     "5fd2be03b1f8b5eef48d507d001ebf0a82e875a1^2"),
    ("python-attrs/attrs", "4b5b295bb815bf845fa3570bf63781a88212db40^",
     "4b5b295bb815bf845fa3570bf63781a88212db40"),
]

# Runs `difforacle` with the code of the checkout given first, whatever is installed.
_CHILD = """import sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from checkout_code import use_this_checkout
use_this_checkout()
from difforacle.bot.cli import main
sys.exit(main(sys.argv[2:]))
"""


@dataclass(frozen=True)
class Timing:
    history: float  # seconds, as the run reports them
    wall: float  # seconds of the whole process
    read: int  # commits read from git


def risk(checkout: Path, clone: Path, base: str, head: str, cache: Path | None) -> Timing:
    """One `difforacle risk` run in a fresh process; `cache` None: `--no-cache`."""
    with tempfile.TemporaryDirectory(prefix="difforacle-history-") as tmp:
        out = Path(tmp) / "risk.json"
        command = [sys.executable, "-c", _CHILD, str(checkout), "risk", "--repo", str(clone), "--base", base,
                   "--head", head, "--json", str(out), *(["--no-cache"] if cache is None else [])]
        env = {"XDG_CACHE_HOME": str(cache or Path(tmp) / "unused"), "PATH": "/usr/bin:/bin",
               "HOME": tmp, "GIT_CONFIG_NOSYSTEM": "1"}
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"risk failed in {clone.name} with {checkout}: {done.stderr.strip()[-500:]}")
        history = json.loads(out.read_text())["history"]
        return Timing(history["seconds"], wall, history["commits_read"])


def clone(mirrors: Path, repository: str, into: Path) -> Path:
    mirror = mirrors / repository.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"no mirror of {repository} at {mirror}")
    target = into / repository.replace("/", "+")
    subprocess.run(["git", "clone", "-q", str(mirror), str(target)], check=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--checkout", action="append", required=True, metavar="NAME=PATH",
                        help="a checkout of difforacle to time, named (repeat for several)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--earlier", type=int, default=0, metavar="N",
                        help="also time a run on a cache filled N commits before the base")
    parser.add_argument("--case", action="append", metavar="OWNER/NAME:BASE:HEAD",
                        help="a pull request to time (default: pytest's and attrs')")
    args = parser.parse_args()
    checkouts = [(name, Path(path).resolve()) for name, _, path in (c.partition("=") for c in args.checkout)]
    cases = [tuple(case.split(":", 2)) for case in args.case] if args.case else CASES
    print("| repository | commits | checkout | history s (cold) | `risk --no-cache` s | commits read |"
          + (f" history s, cache of base~{args.earlier} |" if args.earlier else ""))
    print("|---|---|---|---|---|---|" + ("---|" if args.earlier else ""))
    with tempfile.TemporaryDirectory(prefix="difforacle-history-clones-") as tmp:
        for repository, base, head in cases:
            repo = clone(args.mirrors, repository, Path(tmp))
            count = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"], check=True,
                                   capture_output=True, text=True).stdout.strip()
            for name, checkout in checkouts:
                runs = [risk(checkout, repo, base, head, None) for _ in range(args.repeat)]
                history, wall = (statistics.median(r.history for r in runs),
                                 statistics.median(r.wall for r in runs))
                row = f"| {repository} | {count} | {name} | {history:.2f} | {wall:.2f} | {runs[0].read} |"
                if args.earlier:
                    warm = []
                    for _ in range(args.repeat):
                        with tempfile.TemporaryDirectory(prefix="difforacle-history-cache-") as cache:
                            risk(checkout, repo, f"{base}~{args.earlier}", head, Path(cache))
                            warm.append(risk(checkout, repo, base, head, Path(cache)))
                    row += f" {statistics.median(r.history for r in warm):.2f} ({warm[0].read} read) |"
                print(row, flush=True)
    print(f"\nload average after the runs (1, 5, 15 min): {', '.join(f'{v:.1f}' for v in os.getloadavg())}; "
          f"{os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
