"""Schwa-style defect scores (`difforacle.generator.planning.defect_scores`, reading
`difforacle.generator.planning.history`) on synthetic histories: ranking, fix pattern, merges,
renames, the PR, cache.

And the defect scores of a few files from their own history only (`score_history(paths=...)`):
exactly the scores the whole history gives their units, renames followed back, for a fraction of
the reading; cached by what was read."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from support.histories import DAY, EPOCH, commit, source
from support.repos import RepoBuilder

import difforacle.generator.planning.history as commits
from difforacle.generator.changes.model import Unit
from difforacle.generator.planning.defect_scores import (
    PullRequestInfo,
    RiskTable,
    UnitRisk,
    Weights,
    read_history,
    score_history,
    twr,
)
from difforacle.generator.planning.history import CommitReader, branch_is_fix, default_cache_dir, is_fix


def table(builder: RepoBuilder, tmp_path: Path, base: str = "HEAD", **options: object) -> RiskTable:
    options.setdefault("cache_dir", tmp_path / "cache")
    return score_history(builder.repo, builder.repo.git.rev_parse(base), **options)


# ---------------------------------------------------------------- formulas


@pytest.mark.parametrize("message", [
    "Fix crash on empty input", "fixes #12", "Fixed the parser", "fixing flaky order", "bug in cache",
    "Bugfix: off by one", "defect 42", "Regression in 1.2", "HOTFIX for login", "fix: handle None",
    "fix(parser): handle None", "feat!: x\n\nthis fixes a leak", 'Revert "Add cache"',
    "Undo cache\n\nThis reverts commit 0123abcd.", "Resolve bugs in sorting",
])
def test_fix_pattern_positives(message: str) -> None:
    assert is_fix(message)


@pytest.mark.parametrize("message", [
    "Add prefix option", "New fixture for the cache", "Attach the debugger", "suffix handling",
    "fixup! Add cache", "Add feature", "Prefixes and fixtures", "debugging aids", "closes #12",
    "patch the docs", "reverted to upstream defaults in prose",
])
def test_fix_pattern_negatives(message: str) -> None:
    assert not is_fix(message)


def test_branch_names_split_on_separators() -> None:
    assert branch_is_fix("fix/parser-crash")
    assert branch_is_fix("hotfix_login")
    assert branch_is_fix("user/bug-123")
    assert not branch_is_fix("feature/prefix-cache")
    assert not branch_is_fix("add-fixtures")


def test_twr_matches_the_formula_at_0_half_and_1() -> None:
    for t in (0.0, 0.5, 1.0):
        assert twr(t) == 1 / (1 + math.exp(-12 * t + 2 + (1 - 0.4) * 10))
    assert twr(0.0) == pytest.approx(0.000335, abs=1e-6)
    assert twr(0.5) == pytest.approx(0.1192, abs=1e-4)
    assert twr(1.0) == pytest.approx(0.9820, abs=1e-4)
    assert twr(2 / 3) == pytest.approx(0.5)  # the midpoint at TR = 0.4
    assert twr(0.5, time_range=1.0) > twr(0.5)  # a wider time range weighs older commits more


# ---------------------------------------------------------------- ranking


def test_recent_fixes_by_several_authors_outrank_one_old_touch(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"pkg/a.py": source(hot="return 1", cold="return 1")}, "Add a", day=0)
    for day in range(1, 11):  # filler: ten quiet days elsewhere
        commit(builder, {"pkg/other.py": f"X = {day}\n"}, "Tune X", day=day)
    authors = ["bob@example.com", "carol@example.com", "dan@example.com"]
    for index, author in enumerate(authors):
        commit(builder, {"pkg/a.py": source(hot=f"return {index + 2}", cold="return 1")},
               f"Fix hot for case {index}", day=11 + index / 10, author=author)
    risks = table(builder, tmp_path)
    hot, cold = risks.get(("pkg/a.py", "hot")), risks.get(("pkg/a.py", "cold"))
    assert (hot.revisions, hot.fixes, hot.new_authors) == (4, 3, 4)
    assert (cold.revisions, cold.fixes, cold.new_authors) == (1, 0, 1)
    assert hot.score > 10 * cold.score
    assert hot.probability == pytest.approx(1 - math.exp(-hot.score))
    units = [Unit("pkg.a", name, "function", "modified", "pkg/a.py", 1, 2) for name in ("cold", "hot")]
    assert [unit.qualname for unit in risks.rank(units)] == ["hot", "cold"]


def test_score_is_the_weighted_sum_of_time_weighted_events(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1")}, "Add f", day=0)
    commit(builder, {"a.py": source(f="return 2")}, "Fix f", day=1, author="bob@example.com")
    commit(builder, {"b.py": "X = 1\n"}, "Add b", day=2)
    t0, t1 = twr(0.0), twr(0.5)
    expected = 0.25 * (t0 + t1) + 0.5 * t1 + 0.25 * (t0 + t1)
    assert table(builder, tmp_path).get(("a.py", "f")) == UnitRisk(2, 1, 2, expected, 1 - math.exp(-expected))
    weighted = table(builder, tmp_path, weights=Weights(1.0, 0.0, 0.0), time_range=1.0)
    assert weighted.get(("a.py", "f")).score == pytest.approx(twr(0.0, 1.0) + twr(0.5, 1.0))


def test_a_changed_method_touches_its_class_and_module_not_its_siblings(
    builder: RepoBuilder, tmp_path: Path
) -> None:
    def module(value: int) -> str:
        return (f"class C:\n    def m(self):\n        def inner():\n            return {value}\n"
                f"        return inner()\n\n    def n(self):\n        return 0\n\n\nY = 1\n")

    commit(builder, {"a.py": module(1)}, "Add", day=0)
    commit(builder, {"a.py": module(2)}, "Change the nested function", day=1)
    risks = table(builder, tmp_path)
    assert {qualname: risks.get(("a.py", qualname)).revisions for qualname in
            ("<module>", "C", "C.m", "C.n", "C.m.inner")} == {
        "<module>": 2, "C": 2, "C.m": 2, "C.n": 1, "C.m.inner": 0}


def test_removed_lines_count_for_the_unit_they_lost(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": "def f():\n    x = 1\n    return 2\n\n\ndef g():\n    return 3\n"}, "Add", day=0)
    commit(builder, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 3\n"}, "Drop x", day=1)
    risks = table(builder, tmp_path)
    assert risks.get(("a.py", "f")).revisions == 2
    assert risks.get(("a.py", "g")).revisions == 1


def test_files_that_do_not_parse_are_skipped(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1"), "broken.py": "def (:\n"}, "Add", day=0)
    commit(builder, {"a.py": source(f="return 2"), "broken.py": "def ((:\n", "notes.txt": "x\n"}, "Edit",
           day=1)
    risks = table(builder, tmp_path)
    assert risks.get(("a.py", "f")).revisions == 2
    assert not [key for key in risks.units if key[0] != "a.py"]


def test_ties_rank_by_key_and_unknown_units_have_no_risk(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1", g="return 1")}, "Add", day=0)
    risks = table(builder, tmp_path)
    assert risks.rank([("a.py", "g"), ("a.py", "f"), ("new.py", "h")]) == [
        ("a.py", "f"), ("a.py", "g"), ("new.py", "h")]
    assert risks.get(("new.py", "h")) == UnitRisk()
    assert [entry["qualname"] for entry in risks.to_json()["units"]] == ["<module>", "f", "g"]


# ---------------------------------------------------------------- window and history shape


def test_time_is_normalized_over_the_window(builder: RepoBuilder) -> None:
    for day in (0, 1, 4):
        commit(builder, {"a.py": f"X = {day}\n"}, day=day)
    history = read_history(builder.repo, builder.repo.head.commit.hexsha, reader=CommitReader(
        builder.repo, cache=False))
    assert [entry.t for entry in history.entries] == [0.0, 0.25, 1.0]
    single = read_history(builder.repo, "HEAD~1", window=1, reader=CommitReader(builder.repo, cache=False))
    assert [entry.t for entry in single.entries] == [1.0]  # one commit: t = 1
    assert single.entries[0].commit.sha == builder.repo.commit("HEAD~1").hexsha
    uncached = CommitReader(builder.repo, cache=False)
    everything = read_history(builder.repo, "HEAD", window=None, reader=uncached)
    assert everything.window_commits == 3
    with pytest.raises(ValueError, match="window"):
        read_history(builder.repo, "HEAD", window=0)


def test_merges_are_followed_on_the_first_parent_only(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1", g="return 1")}, "Add", day=0)
    builder.branch("side")
    commit(builder, {"a.py": source(f="return 1", g="return 2")}, "Side one", day=1, author="bob@example.com")
    commit(builder, {"a.py": source(f="return 1", g="return 3")}, "Side two", day=2, author="bob@example.com")
    builder.switch("main")
    commit(builder, {"b.py": "X = 1\n"}, "Main", day=3)
    date = f"@{EPOCH + 4 * DAY} +0000"
    builder.repo.git.merge("--no-ff", "-q", "-m", "Merge side", "side",
                           env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
                                "GIT_AUTHOR_EMAIL": "alice@example.com"})
    risks = table(builder, tmp_path)
    assert risks.window_commits == 3  # Add, Main, the merge: not the two side commits
    g = risks.get(("a.py", "g"))
    assert (g.revisions, g.new_authors) == (2, 1)  # the merge counts once, by its author (alice)
    assert risks.get(("a.py", "f")).revisions == 1


def test_a_renamed_file_keeps_its_history(builder: RepoBuilder, tmp_path: Path) -> None:
    body = "\n\n".join(f"def f{i}():\n    return {i}\n" for i in range(8))
    commit(builder, {"old.py": body}, "Add", day=0)
    for day in (1, 2):
        commit(builder, {"old.py": body.replace("return 0", f"return {day * 10}")}, "Fix f0", day=day)
    moved = body.replace("return 0", "return 20").replace("return 1", "return 11")
    commit(builder, {"old.py": None, "pkg/new.py": moved}, "Move", day=3)  # renamed with an edit of f1
    commit(builder, {"pkg/new.py": moved.replace("return 20", "return 30")}, "Fix f0 again", day=4)
    risks = table(builder, tmp_path)
    assert risks.get(("pkg/new.py", "f0")).revisions == 4
    assert risks.get(("pkg/new.py", "f0")).fixes == 3
    assert risks.get(("pkg/new.py", "f1")).revisions == 2
    assert risks.get(("pkg/new.py", "f2")).revisions == 1
    assert not [key for key in risks.units if key[0] == "old.py"]


def test_a_deleted_file_drops_its_history(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1")}, "Add", day=0)
    commit(builder, {"a.py": None}, "Remove", day=1)
    commit(builder, {"a.py": source(f="return 2")}, "Add again", day=2)
    assert table(builder, tmp_path).get(("a.py", "f")).revisions == 1


# ---------------------------------------------------------------- the pull request


def test_the_pull_request_is_folded_in_as_the_newest_revisions(builder: RepoBuilder, tmp_path: Path) -> None:
    commit(builder, {"a.py": source(f="return 1", g="return 1")}, "Add", day=0)
    commit(builder, {"b.py": "X = 1\n"}, "Other", day=10)
    base = builder.repo.head.commit.hexsha
    builder.branch("feature/speed")
    commit(builder, {"a.py": source(f="return 2", g="return 1")}, "Speed up f", day=11,
           author="eve@example.com")
    commit(builder, {"a.py": source(f="return 3", g="return 1")}, "Tidy f", day=12)
    head = builder.repo.head.commit.hexsha
    builder.switch("main")
    before = table(builder, tmp_path, base).get(("a.py", "f"))

    plain = table(builder, tmp_path, base, pr=PullRequestInfo(head, "Speed up f", "feature/speed"))
    after = plain.get(("a.py", "f"))
    assert plain.pr_commits == 2
    assert (after.revisions, after.fixes, after.new_authors) == (3, 0, 2)  # eve is new; alice is not
    assert after.score == pytest.approx(before.score + 0.25 * 2 * twr(1.0) + 0.25 * twr(1.0))
    assert plain.get(("a.py", "g")) == table(builder, tmp_path, base).get(("a.py", "g"))

    by_title = table(builder, tmp_path, base, pr=PullRequestInfo(head, "Fix slow f", "feature/speed"))
    by_branch = table(builder, tmp_path, base, pr=PullRequestInfo(head, "Speed up f", "bugfix/slow-f"))
    for fixed in (by_title, by_branch):
        assert fixed.get(("a.py", "f")).fixes == 2
        assert fixed.get(("a.py", "f")).score == pytest.approx(after.score + 0.5 * 2 * twr(1.0))


def test_a_pull_request_merging_base_in_counts_only_its_own_commits(
    builder: RepoBuilder, tmp_path: Path
) -> None:
    commit(builder, {"a.py": source(f="return 1"), "b.py": source(h="return 1")}, "Add", day=0)
    builder.branch("feature")
    commit(builder, {"a.py": source(f="return 2")}, "Change f", day=1)
    builder.switch("main")
    commit(builder, {"b.py": source(h="return 2")}, "Change h", day=2)
    base = builder.repo.head.commit.hexsha
    builder.switch("feature")
    builder.repo.git.merge("--no-ff", "-q", "-m", "Merge main", "main")
    head = builder.repo.head.commit.hexsha
    builder.switch("main")
    risks = table(builder, tmp_path, base, pr=PullRequestInfo(head))
    assert risks.pr_commits == 1
    assert risks.get(("b.py", "h")).revisions == 2  # from history only, not from the PR's merge


# ---------------------------------------------------------------- cache


def _history(builder: RepoBuilder, commits: int, start: int = 0) -> None:
    for day in range(start, start + commits):
        names = {f"f{i}": f"return {day if i == day % 3 else 0}" for i in range(3)}
        commit(builder, {f"m{day % 2}.py": source(**names)}, "Fix f" if day % 4 == 0 else "Edit", day=day,
               author=f"dev{day % 3}@example.com")


def test_the_second_run_reads_only_new_commits(builder: RepoBuilder, tmp_path: Path) -> None:
    _history(builder, 6)
    first = table(builder, tmp_path)
    assert (first.commits_read, first.commits_cached) == (6, 0)
    again = table(builder, tmp_path)
    assert (again.commits_read, again.commits_cached) == (0, 6)
    assert again.units == first.units
    _history(builder, 3, start=6)
    later = table(builder, tmp_path)
    assert (later.commits_read, later.commits_cached) == (3, 6)
    cold = table(builder, tmp_path, cache=False)
    assert (cold.commits_read, cold.commits_cached) == (9, 0)
    assert later.units == cold.units
    assert list(later.units) == list(cold.units)


def test_a_pull_requests_commits_are_cached_too(builder: RepoBuilder, tmp_path: Path) -> None:
    _history(builder, 3)
    builder.branch("feature")
    _history(builder, 2, start=3)
    head = builder.repo.head.commit.hexsha
    builder.switch("main")
    first = table(builder, tmp_path, pr=PullRequestInfo(head))
    second = table(builder, tmp_path, pr=PullRequestInfo(head))
    assert (first.commits_read, second.commits_read, second.commits_cached) == (5, 0, 5)
    assert second.units == first.units


@pytest.mark.parametrize("content", [
    "{not json", "[1, 2]", '{"format": 1, "commits": []}', '{"format": 999, "commits": {}}', "\udcff",
])
def test_a_corrupt_cache_is_ignored_and_rebuilt(builder: RepoBuilder, tmp_path: Path, content: str) -> None:
    _history(builder, 4)
    cold = table(builder, tmp_path)
    [cache_file] = (tmp_path / "cache").iterdir()
    cache_file.write_bytes(content.encode("utf-8", "surrogateescape"))
    rebuilt = table(builder, tmp_path)
    assert (rebuilt.commits_read, rebuilt.units) == (4, cold.units)
    assert json.loads(cache_file.read_text())["format"] == 1
    assert table(builder, tmp_path).commits_read == 0


def test_a_malformed_record_is_read_again(builder: RepoBuilder, tmp_path: Path) -> None:
    _history(builder, 4)
    cold = table(builder, tmp_path)
    [cache_file] = (tmp_path / "cache").iterdir()
    data = json.loads(cache_file.read_text())
    sha = builder.repo.head.commit.hexsha
    data["commits"][sha]["touches"] = ["not", "a", "mapping"]
    cache_file.write_text(json.dumps(data))
    again = table(builder, tmp_path)
    assert (again.commits_read, again.commits_cached, again.units) == (1, 3, cold.units)


def test_an_unwritable_cache_is_not_an_error(builder: RepoBuilder, tmp_path: Path) -> None:
    _history(builder, 2)
    blocker = tmp_path / "file"
    blocker.write_text("")
    risks = table(builder, tmp_path, cache_dir=blocker / "cache")  # a folder inside a file
    assert risks.commits_read == 2


def test_the_default_cache_is_per_repository_under_xdg_cache_home(
    builder: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "difforacle"
    _history(builder, 2)
    score_history(builder.repo, builder.repo.head.commit.hexsha)
    other = RepoBuilder(tmp_path / "other")
    commit(other, {"a.py": "X = 1\n"})
    score_history(other.repo, other.repo.head.commit.hexsha)
    assert len(list((tmp_path / "xdg" / "difforacle").iterdir())) == 2
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "difforacle"


# ---------------------------------------------------------------- a few files' own history

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
