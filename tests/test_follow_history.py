"""The defect scores of a few files from their own history only (`score_history(paths=...)`): exactly the
scores the whole history gives their units, renames followed back, for a fraction of the reading; cached
by what was read."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from support.histories import DAY, EPOCH, commit
from support.repos import RepoBuilder

import difforacle.generator.planning.history as commits
from difforacle.generator.planning.defect_scores import PullRequestInfo, RiskTable, score_history

AUTHORS = ["alice@example.com", "bob@example.com", "carol@example.com", "dan@example.com"]
NAMES = ["pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/sub/d.py", "pkg/sub/e.py", "f.py", "g.py", "h.py"]


def module(versions: list[int], salt: int = 0) -> str:
    """Eight small functions; one version changes one function, so a rename with an edit stays a rename."""
    return "\n\n".join(f"def f{index}(x):\n    y = x + {version}\n    return y * {index + salt}\n"
                       for index, version in enumerate(versions))


EDITS = ("edit",)
ANY = ("edit", "edit", "edit", "rename", "delete", "create")


class RandomHistory:
    """Edits, renames (with and without an edit), deletions, re-creations of freed paths, fixes and
    several authors, from a seed; the modules' state is read back from the work tree after a merge."""

    def __init__(self, builder: RepoBuilder, seed: int) -> None:
        self.builder, self.rng = builder, random.Random(seed)
        self.files: dict[str, tuple[list[int], int]] = {}  # path -> (function versions, salt)
        self.day = 0.0

    def steps(self, count: int, kinds: tuple[str, ...] = ANY) -> None:
        for _ in range(count):
            self.step(kinds)

    def step(self, kinds: tuple[str, ...]) -> None:
        rng, files = self.rng, self.files
        free = [name for name in NAMES if name not in files]
        kind = rng.choice(kinds) if files else "create"
        change: dict[str, str | None] = {}
        if kind == "rename" and free:
            old, new = rng.choice(sorted(files)), rng.choice(free)
            files[new] = files.pop(old)
            if rng.random() < 0.6:
                files[new][0][rng.randrange(8)] += 1
            change = {old: None, new: module(*files[new])}
        elif kind == "delete" and len(files) > 2:
            gone = rng.choice(sorted(files))
            del files[gone]
            change = {gone: None}
        elif kind == "create" and free:
            name = rng.choice(free)
            files[name] = ([rng.randrange(100) for _ in range(8)], rng.randrange(10, 1000))
            change = {name: module(*files[name])}
        else:
            for name in rng.sample(sorted(files), min(len(files), rng.randint(1, 2))):
                for _ in range(rng.randint(1, 2)):
                    files[name][0][rng.randrange(8)] += 1
                change[name] = module(*files[name])
        self.day += rng.choice([0.1, 0.5, 1, 3])
        message = f"Fix {kind} {self.day}" if rng.random() < 0.3 else f"{kind.title()} {self.day}"
        commit(self.builder, change, message, day=self.day, author=rng.choice(AUTHORS))

    def merge(self, branch: str, *options: str) -> None:
        self.day += 1
        date = f"@{EPOCH + int(self.day * DAY)} +0000"
        self.builder.repo.git.merge("-q", "--no-ff", "--no-edit", *options, branch,
                                    env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
        self.reload()

    def reload(self) -> None:
        """The modules as the work tree has them (after a merge or a checkout)."""
        self.files = {}
        for name in NAMES:
            path = self.builder.root / name
            if path.exists():
                lines = path.read_text().splitlines()
                versions = [int(line.rsplit(" ", 1)[1]) for line in lines if "y = x + " in line]
                salt = int(next(line for line in lines if "return y * " in line).rsplit(" ", 1)[1])
                self.files[name] = (versions, salt)


def random_repository(builder: RepoBuilder, seed: int) -> tuple[str, PullRequestInfo]:
    """A main line of 45 commits, one of them a merge, and a pull request of 5 commits (one merges main
    in) forked 3 commits before base; merged branches only edit, so no merge conflicts."""
    history = RandomHistory(builder, seed)
    history.steps(25)
    builder.branch("side")
    history.steps(3, EDITS)
    builder.switch("main")
    history.merge("side", "-X", "theirs")  # the work tree had side's files; main moved on nowhere
    history.steps(14)
    fork = builder.repo.head.commit.hexsha
    history.steps(3, EDITS)
    base = builder.repo.head.commit.hexsha
    builder.branch("feature", fork)
    history.reload()
    history.steps(3, ("edit", "rename", "create"))
    history.merge("main", "-X", "ours")
    history.steps(1)
    head = builder.repo.head.commit.hexsha
    builder.switch("main")
    return base, PullRequestInfo(head, "Speed up")


def followed(table: RiskTable, paths: set[str]) -> dict:
    return {key: risk for key, risk in table.units.items() if key[0] in paths}


def paths_at(builder: RepoBuilder, *shas: str) -> set[str]:
    return {path for sha in shas for path in builder.repo.git.ls_tree("-r", "--name-only", sha).split()
            if path.endswith(".py")}


# ---------------------------------------------------------------- the same scores


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_a_few_files_score_as_the_whole_history_scores_them(builder: RepoBuilder, tmp_path: Path, seed: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "_CHUNK", 3)  # small chunks: the later windows mix cached and read ones
    base, pr = random_repository(builder, seed)
    repo = builder.repo
    candidates = sorted(paths_at(builder, base, pr.head_sha))
    for window in (None, 12, 11):
        for proposal in (pr, None):
            whole = score_history(repo, base, window=window, pr=proposal, cache=False)
            for paths in [{path} for path in candidates] + [set(candidates)]:
                narrow = score_history(repo, base, window=window, pr=proposal, paths=paths,
                                       cache_dir=tmp_path / "cache")
                assert narrow.units == followed(whole, paths), (window, proposal is not None, paths)
                assert (narrow.window_commits, narrow.pr_commits) == (whole.window_commits, whole.pr_commits)
    statuses = repo.git.log("--first-parent", "-M", "--name-status", "--format=", base).split()
    assert "D" in statuses and any(status.startswith("R") for status in statuses)  # what is checked


def test_renames_are_followed_back_through_files_that_are_gone(builder: RepoBuilder) -> None:
    body = module([1, 2, 3, 4, 5, 6, 7, 8])
    commit(builder, {"a.py": body}, "Add a", day=0)
    commit(builder, {"a.py": body.replace("+ 1", "+ 11")}, "Fix f0", day=1, author="bob@example.com")
    commit(builder, {"a.py": None, "x.py": body.replace("+ 1", "+ 12")}, "Move a to x", day=2)
    commit(builder, {"x.py": None, "b.py": body.replace("+ 1", "+ 13")}, "Fix: move x to b", day=3)
    commit(builder, {"a.py": module([9] * 8, salt=5)}, "A new a", day=4, author="carol@example.com")
    base = builder.repo.head.commit.hexsha
    builder.branch("feature")
    commit(builder, {"b.py": None, "pkg/b.py": body.replace("+ 1", "+ 14")}, "Move b into pkg", day=5)
    head = builder.repo.head.commit.hexsha
    builder.switch("main")
    pr = PullRequestInfo(head)
    whole = score_history(builder.repo, base, pr=pr, cache=False)
    for paths in ({"pkg/b.py"}, {"a.py"}, {"a.py", "pkg/b.py"}):
        narrow = score_history(builder.repo, base, pr=pr, cache=False, paths=paths)
        assert narrow.units == followed(whole, paths)
    f0 = whole.get(("pkg/b.py", "f0"))
    assert (f0.revisions, f0.fixes, f0.new_authors) == (5, 2, 2)  # every move carried the history along
    assert whole.get(("a.py", "f0")).revisions == 1  # the new a.py starts afresh


def test_only_the_followed_files_are_parsed(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(builder, {"a.py": module([1] * 8), "big.py": module([2] * 8, salt=3)}, "Add", day=0)
    for day in range(1, 6):
        commit(builder, {"big.py": module([2 + day] * 8, salt=3)}, "Tune big", day=day)
    commit(builder, {"a.py": module([2] + [1] * 7)}, "Fix a", day=6)
    parsed: list[bytes] = []
    parse = commits.parse_spans
    monkeypatch.setattr(commits, "parse_spans", lambda source: parsed.append(source) or parse(source))
    table = score_history(builder.repo, "HEAD", paths={"a.py"}, cache=False)
    assert set(parsed) == {module([1] * 8).encode(), module([2] + [1] * 7).encode()}
    assert table.get(("a.py", "f0")).revisions == 2 and table.get(("a.py", "f1")).revisions == 1
    assert not [key for key in table.units if key[0] != "a.py"]  # big.py was not read: it is not scored
    assert table.window_commits == 7  # yet t spans the whole window


@pytest.mark.parametrize("literal", ["0", "1"])
def test_paths_are_read_as_paths_whatever_the_environment(builder: RepoBuilder, literal: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    commit(builder, {"a[b].py": module([1] * 8), "ab.py": module([2] * 8, salt=3)}, "Add", day=0)
    commit(builder, {"a[b].py": module([2] + [1] * 7)}, "Fix f0", day=1)
    commit(builder, {"ab.py": module([3] * 8, salt=3)}, "Change ab", day=2)
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", literal)  # git's: no globs, no pathspec magic
    whole = score_history(builder.repo, "HEAD", cache=False)
    assert whole.get(("a[b].py", "f0")).revisions == 2 and whole.get(("ab.py", "f0")).revisions == 2
    for paths in ({"a[b].py"}, {"ab.py"}):
        assert score_history(builder.repo, "HEAD", cache=False, paths=paths).units == followed(whole, paths)


# ---------------------------------------------------------------- progress and cache


def test_progress_counts_the_commits_read(builder: RepoBuilder, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "_PROGRESS_EVERY", 10)
    for day in range(25):
        commit(builder, {"a.py": f"X = {day}\n"} if day % 5 == 0 else {"b.py": f"Y = {day}\n"}, day=day)
    seen: list[int] = []
    score_history(builder.repo, "HEAD", paths={"a.py"}, cache_dir=tmp_path, progress=seen.append)
    assert seen == [0, 10, 20, 25]  # every commit of the window, though only five change a.py
    seen.clear()
    score_history(builder.repo, "HEAD", window=7, paths={"a.py"}, cache=False, progress=seen.append)
    assert seen == [0, 7]
    seen.clear()
    score_history(builder.repo, "HEAD", paths={"a.py"}, cache_dir=tmp_path, progress=seen.append)
    assert seen == [0]  # from the cache


def test_the_cache_is_keyed_by_what_was_read(builder: RepoBuilder, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "_CHUNK", 1)  # a chunk a commit: any window is made of cached chunks
    base, pr = random_repository(builder, 6)
    cache = tmp_path / "cache"

    def table(paths: set[str], **options: object) -> RiskTable:
        return score_history(builder.repo, base, pr=pr, cache_dir=cache, paths=paths, **options)

    one, two, three, *_ = sorted(paths_at(builder, pr.head_sha))
    first = table({one, two})
    total = first.window_commits + first.pr_commits
    assert (first.commits_read, first.commits_cached) == (total, 0)
    again = table({two, one})
    assert (again.commits_read, again.commits_cached, again.units) == (0, total, first.units)
    other = table({three})  # another file: read, not taken from the first one's entries
    assert other.commits_read == total
    assert other.units == followed(score_history(builder.repo, base, pr=pr, cache=False), {three})
    assert first.units and other.units
    shorter = table({one, two}, window=5)
    assert (shorter.commits_read, shorter.commits_cached) == (0, 5 + first.pr_commits)
    whole = score_history(builder.repo, base, pr=pr, window=5, cache=False)
    assert shorter.units == followed(whole, {one, two})


def test_a_later_base_reads_only_the_commits_the_cache_lacks(builder: RepoBuilder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits, "_CHUNK", 1)
    passes: list[int] = []
    diff_tree = commits._diff_tree

    def counted(repo: object, pairs: list, pathspecs: list, **options: bool) -> object:
        if pairs:
            passes.append(len(pairs))
        return diff_tree(repo, pairs, pathspecs, **options)

    monkeypatch.setattr(commits, "_diff_tree", counted)
    history = RandomHistory(builder, 7)
    history.steps(30, ("edit", "edit", "rename"))
    earlier = builder.repo.head.commit.hexsha
    paths = paths_at(builder, earlier)
    cold = score_history(builder.repo, earlier, window=20, paths=paths, cache_dir=tmp_path)
    assert cold.commits_read == 20 and passes[0] == 20  # one reading for all of the chunks
    history.steps(3, EDITS)
    later = builder.repo.head.commit.hexsha
    passes.clear()
    warm = score_history(builder.repo, later, window=20, paths=paths, cache_dir=tmp_path)
    assert (warm.commits_read, warm.commits_cached) == (3, 17)
    assert passes == [3]  # the three new commits, in one pass; none of them adds a file
    assert warm.units == score_history(builder.repo, later, window=20, paths=paths, cache=False).units


@pytest.mark.parametrize("damage", ["file", "entry"])
def test_a_damaged_cache_is_read_again(builder: RepoBuilder, tmp_path: Path, damage: str) -> None:
    base, pr = random_repository(builder, 5)
    cache, paths = tmp_path / "cache", paths_at(builder, pr.head_sha)
    cold = score_history(builder.repo, base, pr=pr, cache_dir=cache, paths=paths)
    assert cold.units
    [cache_file] = cache.iterdir()
    if damage == "file":
        cache_file.write_text("{not json")
    else:
        data = json.loads(cache_file.read_text())
        for chunk in data["chunks"].values():
            chunk["commits"] = {"not a listed commit": {}}
        cache_file.write_text(json.dumps(data))
    rebuilt = score_history(builder.repo, base, pr=pr, cache_dir=cache, paths=paths)
    assert (rebuilt.commits_read, rebuilt.units) == (cold.commits_read, cold.units)
    assert score_history(builder.repo, base, pr=pr, cache_dir=cache, paths=paths).commits_read == 0


def test_no_files_read_nothing(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(builder, {"a.py": "X = 1\n"}, day=0)
    monkeypatch.setattr(commits, "_diff_tree", lambda *args, **kwargs: pytest.fail("read a diff"))
    table = score_history(builder.repo, "HEAD", paths=set(), cache=False)
    assert (table.units, table.window_commits) == ({}, 1)
