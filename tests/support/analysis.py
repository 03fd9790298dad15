"""Running the engine on a `RepoBuilder`'s pull request, and the tests it writes on either commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from difforacle.generator import Options, Report, analyze
from support.engine_parts import PROJECT_PYTHON
from support.repos import RepoBuilder, export_commit


def run_analyze(builder: RepoBuilder, *, base: str = "main", head: str = "feature", budget: float = 4.0,
                seed: int = 0, max_sequences: int | None = 300, **options: object) -> Report:
    options.setdefault("python", PROJECT_PYTHON)
    return analyze(builder.root, base, head,
                   Options(budget=budget, seed=seed, max_sequences=max_sequences, **options))


def differences_summary(report: Report) -> list[tuple[str, str, str, str]]:
    return [(d.kind, d.target, d.base, d.head) for d in report.differences]


def run_pytest_file(test_source: str, folder: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    """Write `test_source` into `folder` and run it with pytest, `pythonpath` first on the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "test_generated.py"
    path.write_text(test_source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update({"PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
         "-c", os.devnull, str(path)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=60)


def statuses_on_both_commits(builder: RepoBuilder, test_source: str, tmp_path: Path) -> tuple[int, int]:
    """pytest's exit status for `test_source` on exports of main and of feature: (0, 1) when it
    passes on base and fails on head, outside the engine."""
    base = export_commit(builder.root, "main", tmp_path / "export-main")
    head = export_commit(builder.root, "feature", tmp_path / "export-feature")
    return (run_pytest_file(test_source, tmp_path / "on-main", base).returncode,
            run_pytest_file(test_source, tmp_path / "on-feature", head).returncode)
