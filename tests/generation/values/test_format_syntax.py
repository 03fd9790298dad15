"""The edits a format's grammar allows (`format_syntax`): each format told from its text, and each
edit one the format's syntax permits."""

from __future__ import annotations

import random

import pytest

from difforacle.generator.generation.values.format_syntax import FORMATS, format_edit

RNG_SEEDS = range(300)


def _formats(text: str) -> list[str]:
    return [form.name for form in FORMATS if form.looks_like.search(text)]


@pytest.mark.parametrize(("text", "formats"), [
    ('<p class="a">x</p>', ["markup"]),
    ("[server]\nport = 80\n", ["ini"]),
    ("x = +5", ["ini"]),
    ("select a from t", ["sql"]),
    ("ann@example.org", ["email"]),
    ("https://example.org/a?x=1", ["url"]),
    ("2024-01-05T10:20:30", ["datetime"]),
    ("1h 30m", []),
    ("a < b and c > d", []),
    ("https: not a key", []),
])
def test_a_text_is_in_the_formats_its_syntax_says(text: str, formats: list[str]) -> None:
    assert _formats(text) == formats


@pytest.mark.parametrize(("text", "expected"), [
    ('<p class="a">x</p>', {'<p class="a"><!-- -->x</p>', '<p class="a">&#120;</p>',
                            '<p class="a">&#x78;</p>', "<p class='a'>x</p>", '<p\n class="a">x</p>'}),
    ("<a>b & c</a>", {"<a>b &amp; c</a>"}),
    ("[server]\nport = 80\n", {"[server]\nport = 80 # comment\n", "; comment\n[server]\nport = 80\n",
                               '[server]\nport = "80"\n', "[server]\nport\t = 80\n"}),
    ("select a from t where b = 'x'", {"select a /* comment */ from t where b = 'x'",
                                       "select a from t where b = 'x' -- comment",
                                       "select a from t where b = ''x'"}),
    ("ann@example.org", {'"ann"@example.org', "ann(comment)@example.org", "Name <ann@example.org>",
                         "ann@example.org."}),
    ("https://example.org/a?x=1", {"https://example.org/%61?x=1", "https://example.org/a?x=1#fragment",
                                   "https://example.org//a?x=1", "HTTPS://example.org/a?x=1"}),
    ("2024-01-05T10:20:30", {"2024-01-05 10:20:30", "2024-01-05T10:20:30Z", "2024-01-05T10:20:30+00:00",
                             "2024-01-05T10:20:30.000"}),
    ("2024-01-05T10:20:30Z", {"2024-01-05T10:20:30+00:00"}),
])
def test_each_format_gets_its_grammars_comments_escapes_and_variants(text: str, expected: set[str]) -> None:
    made = {format_edit(text, random.Random(seed)) for seed in RNG_SEEDS}
    assert expected <= made
    assert text not in made and None not in made  # an edit is always made, and changes the text


def test_a_text_in_no_format_gets_no_edit() -> None:
    assert {format_edit("1h 30m", random.Random(seed)) for seed in range(20)} == {None}
