"""Benchmark: time of the Schwa history analysis on a repository with thousands of commits.

Not a test (pytest does not collect it). Builds a synthetic repository with `git fast-import`
(N commits by a dozen authors over 20 modules of 15 functions each, one commit in five a
"fix"), then times `generator.risk.score_history` cold (empty cache) and cached (the same
call again), for the default window (500 commits) and the whole history, reading every file
(as `risk` without a head) and a pull request's two files (as `diff`), several times, and
prints the medians. `benchmarks/history.py` times real repositories.

    python benchmarks/history_synthetic.py [--commits 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import git

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkout_code import use_this_checkout

use_this_checkout()

from difforacle.generator.planning.defect_scores import score_history  # noqa: E402

MODULES, FUNCTIONS = 20, 15
AUTHORS = [f"dev{n}" for n in range(12)]


def module_source(module: int, versions: list[int]) -> str:
    return "\n\n".join(f"def f{module}_{n}(x):\n    return x + {versions[n]}\n" for n in range(FUNCTIONS))


def build(root: Path, commits: int, seed: int = 1) -> str:
    """A repository of `commits` commits on main; returns the head sha."""
    rng = random.Random(seed)
    versions = [[0] * FUNCTIONS for _ in range(MODULES)]
    stream: list[bytes] = []
    when = 1_600_000_000
    for number in range(commits):
        touched = {0: list(range(MODULES))} if number == 0 else {}
        for _ in range(rng.randint(1, 3)):
            touched.setdefault(0, []).append(rng.randrange(MODULES))
        files = sorted(set(touched[0]))
        for module in files:
            for _ in range(rng.randint(1, 3)):
                versions[module][rng.randrange(FUNCTIONS)] += 1
        author = rng.choice(AUTHORS)
        message = f"fix: bug {number}" if rng.random() < 0.2 else f"change {number}"
        when += rng.randint(60, 86_400)
        lines = [b"commit refs/heads/main", f"mark :{number + 1}".encode(),
                 f"author {author} <{author}@example.com> {when} +0000".encode(),
                 f"committer {author} <{author}@example.com> {when} +0000".encode(),
                 f"data {len(message.encode())}".encode(), message.encode()]
        if number:
            lines.append(f"from :{number}".encode())
        for module in files:
            data = module_source(module, versions[module]).encode()
            lines += [f"M 100644 inline pkg/mod{module}.py".encode(), f"data {len(data)}".encode(), data]
        stream.append(b"\n".join(lines) + b"\n")
    git.Repo.init(root, initial_branch="main")
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    return git.Repo(root).commit("main").hexsha


def measure(repo: git.Repo, head: str, window: int | None, repeat: int,
            paths: list[str] | None = None) -> tuple[float, float]:
    cold, cached = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            started = time.perf_counter()
            score_history(repo, head, window=window, cache_dir=Path(cache), paths=paths)
            cold.append(time.perf_counter() - started)
            started = time.perf_counter()
            score_history(repo, head, window=window, cache_dir=Path(cache), paths=paths)
            cached.append(time.perf_counter() - started)
    return statistics.median(cold), statistics.median(cached)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        head = build(Path(tmp), args.commits)
        repo = git.Repo(tmp)
        for window in (500, None):
            for paths in (None, ["pkg/mod0.py", "pkg/mod1.py"]):
                cold, cached = measure(repo, head, window, args.repeat, paths)
                label = (f"window {window}" if window else f"whole history ({args.commits})") + \
                    (", every file" if paths is None else ", 2 files")
                print(f"{label}: cold {cold:.2f} s, cached {cached:.3f} s (medians of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
