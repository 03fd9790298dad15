"""The pull request's own words (`difforacle.generator.triage.pull_request`), read from a small git
repository: title and body as given, commit messages, lines added to changelog files, and the lines a
changed function adds to its docstring."""

from __future__ import annotations

import git
import pytest
from support.repos import RepoBuilder

from difforacle.generator.changes.checkout import checkouts
from difforacle.generator.changes.units import compute_changes
from difforacle.generator.triage.pull_request import Passage, is_changelog, read_pull_request

MOD = '''\
def parse(text: str) -> int:
    """Seconds in `text`."""
    return int(text)


def helper(value: int) -> int:
    """Twice the value."""
    return 2 * value
'''


def _read(builder: RepoBuilder, title: str = "", body: str = "") -> list[Passage]:
    with checkouts(builder.repo, "main", "feature") as (base, head):
        changes = compute_changes(builder.repo, base.sha, head.sha, base, head)
        return read_pull_request(builder.repo, changes, head.sha, base, head, title, body).passages


HOURS = MOD.replace('"""Seconds in `text`."""',
                    '"""Seconds in `text`.\n\n    Hours count too: 1h is 3600.\n    """')
HOURS = HOURS.replace("return int(text)", "return 3600 * int(text[:-1]) if text[-1:] == 'h' else int(text)")


def test_every_source_of_the_pull_requests_words(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": MOD, "CHANGES.rst": "Changes\n=======\n"}, "base")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": HOURS}, "Parse hours\n\nparse() reads an hour suffix.")
    builder.commit({"pkg/mod.py": HOURS.replace("2 * value", "value + value"),
                    "CHANGES.rst": "Changes\n=======\n\n- ``parse`` reads hours.\n",
                    "changelog.d/12.feature.md": "Hours are parsed.\n"}, "Simpler helper")
    builder.switch("main")
    passages = _read(builder, title="Read hours", body="Closes #12.")
    sources = [p.source for p in passages]
    assert sources[:2] == ["the title", "the body"] and [p.text for p in passages[:2]] == ["Read hours",
                                                                                         "Closes #12."]
    assert [s.split()[0] for s in sources[2:4]] == ["commit", "commit"]  # newest first
    assert passages[2].text.startswith("Simpler helper") and passages[3].text.startswith("Parse hours")
    assert passages[4:6] == [Passage("CHANGES.rst", "\n- ``parse`` reads hours."),
                             Passage("changelog.d/12.feature.md", "Hours are parsed.")]
    # parse's docstring gained a line; the helper's body changed, its docstring did not
    assert passages[6:] == [Passage("the docstring of pkg.mod:parse", "Hours count too: 1h is 3600.",
                                    unit="pkg.mod:parse")]


def test_a_changed_docstring_is_a_passage_of_its_unit(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": MOD}, "base")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": MOD.replace('"""Twice the value."""', '"""Twice the value, at least 0."""')
                    .replace("return 2 * value", "return max(0, 2 * value)")}, "tweak")
    builder.switch("main")
    *_, docstring = _read(builder)
    assert docstring == Passage("the docstring of pkg.mod:helper", "Twice the value, at least 0.",
                                unit="pkg.mod:helper")
    assert _read(builder, title="  ")[0].source.startswith("commit")  # a blank title says nothing


BUMP = '''\
def bump(version: str, token: str = "rc") -> str:
    """Raise the prerelease part of the version.

    :param token: defaults to ``'rc'``
    :return: a new string with the raised prerelease part.
        The original is not modified.

    >>> bump("1.0")
    '1.0-rc.1'
    """
    return version + "-" + (token or "rc") + ".1"
'''


def _docstring_passage(builder: RepoBuilder, base: str, head: str) -> Passage:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": base}, "base")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": head}, "change")
    builder.switch("main")
    [passage] = [p for p in _read(builder) if p.unit == "pkg.mod:bump"]
    return passage


def test_reworded_lines_and_doctest_examples_add_no_statement(builder: RepoBuilder) -> None:
    # an older body put back with its older wording and examples: every word was there before
    older = (BUMP.replace(":param token: defaults to ``'rc'``", ":param token: defaults to ``rc``")
             .replace("a new string with the raised prerelease part.\n        The original is not modified.",
                      "new string with the raised prerelease part")
             .replace(">>> bump(\"1.0\")\n    '1.0-rc.1'", ">>> bump(\"2.0\", token='')\n    '2.0-rc.1'")
             .replace('(token or "rc")', "token"))
    assert _docstring_passage(builder, BUMP, older).text == ""


def test_a_docstring_line_with_a_new_word_is_a_statement(builder: RepoBuilder) -> None:
    changed = (BUMP.replace(":param token: defaults to ``'rc'``",
                            ":param token: defaults to ``'rc'``; empty gives just the number")
               .replace('(token or "rc") + ".1"', '(token + "." if token else "") + "1"'))
    passage = _docstring_passage(builder, BUMP, changed)
    assert passage.text == ":param token: defaults to ``'rc'``; empty gives just the number"


@pytest.mark.parametrize(("path", "changelog"), [
    ("CHANGES.rst", True), ("CHANGELOG.md", True), ("docs/changelog.rst", True), ("HISTORY.txt", True),
    ("NEWS", True), ("changelog.d/123.bugfix.md", True), ("newsfragments/5.feature", True),
    ("release-notes.md", True), ("pkg/changes.py", True), ("pkg/mod.py", False), ("README.md", False),
    ("docs/history_of_the_project/intro.md", False),
])
def test_which_files_are_changelogs(path: str, changelog: bool) -> None:
    assert is_changelog(path) is changelog


def test_a_changelog_in_another_encoding_is_read_with_replacements(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": MOD}, "base")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": HOURS}, "hours")
    (builder.root / "NEWS").write_bytes("- `parse` lit les heures, été\n".encode("latin-1"))
    builder.commit({}, "news in latin-1")
    builder.switch("main")
    [news] = [p for p in _read(builder) if p.source == "NEWS"]
    assert news.text == "- `parse` lit les heures, \ufffdt\ufffd"


def test_a_source_git_cannot_read_is_left_out(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": MOD}, "base")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": HOURS}, "hours")
    builder.switch("main")

    def cut_short(*args: object, **kwargs: object) -> None:
        raise git.GitCommandError(["git", "log"], 128, b"fatal: bad object")

    monkeypatch.setattr(builder.repo.__class__, "iter_commits", cut_short)
    sources = [p.source for p in _read(builder, title="Read hours")]
    assert sources == ["the title", "the docstring of pkg.mod:parse"]


LOCALES = '''\
"""Locale names."""

NAMES = {"en": "English", "hi": "Hindi"}


def name(code: str) -> str:
    """The language of `code`."""
    return NAMES[code]
'''


def test_the_values_the_pull_request_adds_to_its_code_and_tests(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/locales.py": LOCALES, "tests/test_locales.py": "X = 'en'\n"},
                   "base")
    builder.branch("feature")
    regions = '"hi": "Hindi",\n         "hi-in": "Hindi",\n         "-": "x"}'
    added = LOCALES.replace('"hi": "Hindi"}', regions)
    added = added.replace('"""The language of `code`."""', '"""The language of `code`, or its region\'s."""')
    builder.commit({"pkg/locales.py": added,
                    "tests/test_locales.py": "X = 'en'\nY = b'en-GB'\nZ = 'en'\n"}, "regions")
    builder.switch("main")
    with checkouts(builder.repo, "main", "feature") as (base, head):
        changes = compute_changes(builder.repo, base.sha, head.sha, base, head)
        values = read_pull_request(builder.repo, changes, head.sha, base, head).values
    # not "Hindi" (base has it), "-" (no letter or digit), the docstring, or "en" (base's test has it)
    assert values == {"hi-in": "pkg/locales.py:4", b"en-GB": "tests/test_locales.py:2"}
