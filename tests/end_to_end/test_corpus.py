"""The seed corpus: a small edit of an input the project's tests use shows what no generated input does."""

from __future__ import annotations

import re

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Difference, Verdict

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
def _within_declared_types(builder: RepoBuilder, max_sequences: int,
                           components: Components | None = None) -> list[Difference]:
    """The differences a run at budget 30 s shows on inputs its operations' declared types allow."""
    extra = {} if components is None else {"components": components}
    found = run_analyze(builder, budget=30.0, max_sequences=max_sequences, **extra)
    return [d for d in found.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]


# a text argument holding a line break, as the rendered test writes it
LINE_BREAK = re.compile(r'Document\("[^"]*\\(?:n|r|x0b|x0c|x1c|x1d|x1e|x85|u2028|u2029)')
TESTS = '''\
from pkg.document import Document


def test_lines():
    assert Document("title\\n=====\\nbody\\n").lines() == ["title", "=====", "body"]
'''


@pytest.mark.slow
def test_a_mutated_test_input_shows_a_difference_generated_inputs_miss(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/document.py": DOCUMENT, "tests/test_document.py": TESTS},
            {"pkg/document.py": DOCUMENT_HEAD})
    shown = _within_declared_types(builder, 600)  # a dozen text mutations: 600 to meet one
    assert shown and {(d.target, d.kind) for d in shown} == {("pkg.document:Document", "observer")}
    # each input is the test's text edited at a line: blank lines at its end (a line doubled, a
    # newline added), or a line break written another way (CR, a Unicode line separator)
    assert all(LINE_BREAK.search(d.test) for d in shown), [d.test for d in shown]
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
    shown = _within_declared_types(builder, 600)
    assert shown and all(LINE_BREAK.search(d.test) for d in shown), [d.test for d in shown]
    without = run_analyze(builder, budget=30.0, max_sequences=600, components=Components.without(["corpus"]))
    assert [d.verdict for d in without.differences] == [Verdict.OUTSIDE_DECLARED_TYPES]


# head takes a subclass of dict for something else: the test's plain dict still passes
OPTIONS = '''\
def render(options: dict) -> str:
    """The options as `key=value` pairs, in key order."""
    if isinstance(options, dict):
        return ", ".join(f"{key}={value}" for key, value in sorted(options.items()))
    return str(options)
'''
OPTIONS_HEAD = OPTIONS.replace("isinstance(options, dict)", "type(options) is dict")
OPTIONS_TESTS = '''\
from pkg.options import render


def test_render():
    assert render({"b": 2, "a": 1}) == "a=1, b=2"
'''


@pytest.mark.slow
def test_a_test_inputs_items_in_a_subclass_of_its_container_show_what_the_plain_one_does_not(
        builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/options.py": OPTIONS,
                      "tests/test_options.py": OPTIONS_TESTS}, {"pkg/options.py": OPTIONS_HEAD})
    shown = _within_declared_types(builder, 400)
    assert shown and {d.target for d in shown} == {"pkg.options:render"}
    assert all(re.search(r"render\((collections\.(OrderedDict|defaultdict|Counter)|type\('MyDict')", d.test)
               for d in shown), [d.test for d in shown]
    assert _within_declared_types(builder, 400, Components.without(["corpus"])) == []


# head stops stripping a value's comment: the test's value has none
SETTINGS = '''\
def setting(text: str, key: str) -> str | None:
    """The value of `key` in an INI-style text (a `#` starts a comment)."""
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name.strip() == key:
            return value.split("#", 1)[0].strip()
    return None
'''
SETTINGS_HEAD = SETTINGS.replace('value.split("#", 1)[0].strip()', "value.strip()")
SETTINGS_TESTS = '''\
from pkg.settings import setting


def test_setting():
    assert setting("[server]\\nport = 80\\n", "port") == "80"
'''


@pytest.mark.slow
def test_a_comment_where_the_test_inputs_format_allows_one_shows_the_change(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/settings.py": SETTINGS,
                      "tests/test_settings.py": SETTINGS_TESTS}, {"pkg/settings.py": SETTINGS_HEAD})
    shown = _within_declared_types(builder, 400)
    assert shown and {d.target for d in shown} == {"pkg.settings:setting"}
    # the test's line given a comment at its end (perhaps beside another edit)
    assert all(re.search(r"port = [^\\]*#", d.test) for d in shown), [d.test for d in shown]
