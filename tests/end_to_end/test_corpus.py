"""The seed corpus: a small edit of an input the project's tests use shows what no generated input does."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Verdict

DOCUMENT = '''\
class Document:
    """A text document, read line by line."""

    def __init__(self, text: str) -> None:
        self.text = text

    def lines(self) -> list[str]:
        return self.text.splitlines()
'''
# head reads a text's lines another way: the same but for texts that end in blank lines
DOCUMENT_HEAD = DOCUMENT.replace("self.text.splitlines()",
                                 'self.text.rstrip("\\n").split("\\n") if self.text else []')
TESTS = '''\
from pkg.document import Document


def test_lines():
    assert Document("title\\n=====\\nbody\\n").lines() == ["title", "=====", "body"]
'''


@pytest.mark.slow
def test_a_mutated_test_input_shows_a_difference_generated_inputs_miss(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/document.py": DOCUMENT, "tests/test_document.py": TESTS},
            {"pkg/document.py": DOCUMENT_HEAD})
    found = run_analyze(builder, budget=30.0, max_sequences=600)  # ten text mutations: 600 to meet the one
    [difference] = [d for d in found.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    assert (difference.target, difference.kind) == ("pkg.document:Document", "observer")
    assert 'Document("\\n' in difference.test  # blank lines at the end: a line doubled, a newline added
    without = run_analyze(builder, budget=30.0, max_sequences=600, components=Components.without(["corpus"]))
    assert [d.verdict for d in without.differences] == [Verdict.OUTSIDE_DECLARED_TYPES]  # only lines(None)


# The same change made at module level: no call can be told to enter it, so every sequence is
# replayed, and the corpus learns from every seed.
LINES_AT_MODULE = '''\
_split = str.splitlines


class Document:
    """A text document, read line by line."""

    def __init__(self, text: str) -> None:
        self.text = text

    def lines(self) -> list[str]:
        return _split(self.text)
'''
LINES_AT_MODULE_HEAD = LINES_AT_MODULE.replace(
    "_split = str.splitlines",
    '_split = lambda text: text.rstrip("\\n").split("\\n") if text else []  # noqa: E731')


@pytest.mark.slow
def test_a_module_level_change_mutates_test_inputs_too(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/document.py": LINES_AT_MODULE,
                      "tests/test_document.py": TESTS}, {"pkg/document.py": LINES_AT_MODULE_HEAD})
    found = run_analyze(builder, budget=30.0, max_sequences=600)
    shown = [d for d in found.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    assert shown and all('Document("' in d.test and "\\n" in d.test for d in shown)
    without = run_analyze(builder, budget=30.0, max_sequences=600, components=Components.without(["corpus"]))
    assert [d.verdict for d in without.differences] == [Verdict.OUTSIDE_DECLARED_TYPES]
