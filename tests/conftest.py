"""Shared helpers for the tests: throwaway git repositories and running difforacle on them.

`RepoBuilder` builds a repository in `tmp_path` with a local identity (no global git
configuration is needed); `make_pr` commits a base on `main` and a head on `feature`.
`export_commit` writes one commit's files into a plain folder (`git archive`), so generated
tests can be run against either side without touching the repository.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import NoReturn

import git
import pytest

from difforacle.generator import Options, Report, SetupError, analyze

Files = dict[str, str | bytes | None]

# Every git command the tests run (GitPython's and the CLI's) gets an identity and no
# user/system configuration, whatever the machine has.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class RepoBuilder:
    """A throwaway git repository with a local identity; shared by the test modules."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git.Repo.init(root, initial_branch="main")
        with self.repo.config_writer() as config:
            config.set_value("user", "name", "Test")
            config.set_value("user", "email", "test@example.com")
            config.set_value("commit", "gpgsign", "false")
            config.set_value("core", "autocrlf", "false")

    def write(self, files: Files) -> None:
        """Write text or bytes files; None deletes the file."""
        for name, content in files.items():
            path = self.root / name
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)

    def commit(self, files: Files, message: str = "change") -> str:
        self.write(files)
        self.repo.git.add("-A")
        self.repo.git.commit("-q", "--allow-empty", "-m", message)
        return self.repo.head.commit.hexsha

    def branch(self, name: str, start: str = "HEAD") -> None:
        """Create and switch to branch `name`."""
        self.repo.git.checkout("-q", "-b", name, start)

    def switch(self, name: str) -> None:
        self.repo.git.checkout("-q", name)

    def status(self) -> str:
        """`git status --porcelain` including untracked and ignored files ('' when clean)."""
        return self.repo.git.status("--porcelain", "--untracked-files=all", "--ignored")

    def worktrees(self) -> list[str]:
        lines = self.repo.git.worktree("list", "--porcelain").splitlines()
        return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


@pytest.fixture
def builder(tmp_path: Path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")


def make_pr(builder: RepoBuilder, before: Files, after: Files) -> tuple[str, str]:
    """Commit `before` on main and `after` on top of it on branch feature; main stays checked out."""
    base = builder.commit(before, "base")
    builder.branch("feature")
    head = builder.commit(after, "pull request")
    builder.switch("main")
    return base, head


def run_analyze(builder: RepoBuilder, *, base: str = "main", head: str = "feature", budget: float = 4.0,
                seed: int = 0, max_sequences: int | None = 300, **options: object) -> Report:
    return analyze(builder.root, base, head,
                   Options(budget=budget, seed=seed, max_sequences=max_sequences, **options))


def export_commit(repo_root: Path, ref: str, destination: Path) -> Path:
    """The files of commit `ref`, extracted into `destination` (`git archive`, no worktree)."""
    data = subprocess.run(["git", "-C", str(repo_root), "archive", "--format=tar", ref],
                          check=True, capture_output=True).stdout
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(destination, filter="data")
    return destination


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


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m difforacle.bot <args>` in a subprocess, as a user would run it."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run([sys.executable, "-m", "difforacle.bot", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def differences_summary(report: Report) -> list[tuple[str, str, str, str]]:
    return [(d.kind, d.target, d.base, d.head) for d in report.differences]


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, no traceback, and one `difforacle: ...` line on stderr (argparse adds its usage first)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "no message on stderr"
    usage = [line for line in lines if line.startswith(("usage:", " "))]
    message = [line for line in lines if line not in usage]
    assert len(message) == 1, result.stderr
    assert message[0].startswith("difforacle: "), result.stderr
    for fragment in fragments:
        assert fragment in message[0], result.stderr
    return message[0]


def service_unavailable(what: str, why: object) -> NoReturn:
    """Skip a test whose service (Docker, Redis, bubblewrap) is missing here, but fail in CI:
    `.ci/run` installs and starts them all, so a missing one there is a broken CI, not a skip."""
    message = f"{what} is unavailable: {why}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI installs and starts it in .ci/services)", pytrace=False)
    pytest.skip(message)


# The image the App's tests run their Docker sandbox on (.ci/run builds it before the tests).
TEST_IMAGE = os.environ.get("DIFFORACLE_SANDBOX_IMAGE") or "difforacle:test"


@pytest.fixture(scope="session")
def docker_client():  # -> docker.DockerClient (imported lazily: most tests need no Docker)
    import docker

    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # any failure to reach the engine means: no Docker here
        service_unavailable("a Docker engine", exc)
    return client


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    """TEST_IMAGE built from this tree on the debootstrap base; reused while the sources are unchanged."""
    from difforacle.bot.app.image import default_source, ensure_base_image, ensure_image

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        base = ensure_base_image(docker_client, log=log)
        ensure_image(docker_client, TEST_IMAGE, base, default_source(), log=log)
    except SetupError as exc:
        pytest.fail(f"cannot build the sandbox image: {exc}", pytrace=False)
    return TEST_IMAGE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the Docker sandbox need the image built from this tree (minutes on a fresh machine,
    a minute and more whenever the sources changed): they are slow, whatever they do."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_docker = callspec is not None and "docker" in callspec.params.values()
        if on_docker or "sandbox_image" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
