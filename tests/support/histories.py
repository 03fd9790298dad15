"""Git histories with chosen dates and authors, for the tests of the defect scores and of `risk`."""

from __future__ import annotations

from support.repos import RepoBuilder

DAY = 86_400
EPOCH = 1_600_000_000


def commit(builder: RepoBuilder, files: dict[str, str | None], message: str = "change", *,
           day: float = 0, author: str = "alice@example.com") -> str:
    """A commit with a chosen date and author (the builder's own commits all share one identity)."""
    builder.write(files)
    builder.repo.git.add("-A")
    date = f"@{int(EPOCH + day * DAY)} +0000"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": author.split("@")[0],
           "GIT_AUTHOR_EMAIL": author}
    builder.repo.git.commit("-q", "--allow-empty", "-m", message, env=env)
    return builder.repo.head.commit.hexsha


def source(**bodies: str) -> str:
    """A module of one-line functions: source(f="return 1") -> 'def f():\\n    return 1\\n'."""
    return "\n\n".join(f"def {name}():\n    {body}\n" for name, body in bodies.items())
