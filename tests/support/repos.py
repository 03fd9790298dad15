"""Throwaway git repositories for the tests.

`RepoBuilder` builds a repository in a temporary folder with a local identity (no global git
configuration is needed); `make_pr` commits a base on `main` and a head on `feature`.
`export_commit` writes one commit's files into a plain folder (`git archive`), so generated
tests can be run against either side without touching the repository.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import git

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


def make_pr(builder: RepoBuilder, before: Files, after: Files) -> tuple[str, str]:
    """Commit `before` on main and `after` on top of it on branch feature; main stays checked out."""
    base = builder.commit(before, "base")
    builder.branch("feature")
    head = builder.commit(after, "pull request")
    builder.switch("main")
    return base, head


def export_commit(repo_root: Path, ref: str, destination: Path) -> Path:
    """The files of commit `ref`, extracted into `destination` (`git archive`, no worktree)."""
    data = subprocess.run(["git", "-C", str(repo_root), "archive", "--format=tar", ref],
                          check=True, capture_output=True).stdout
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(destination, filter="data")
    return destination
