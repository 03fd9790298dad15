"""Where the pull request's words name a difference's operation (`difforacle.generator.triage.mentions`):
a distinctive name anywhere as a word, a plain lower-case one only where the text marks it as code."""

from __future__ import annotations

import pytest

from difforacle.generator.report.model import TableEntry
from difforacle.generator.triage.mentions import Mention, mention, mentions, names_entry, names_of
from difforacle.generator.triage.pull_request import Passage, PullRequestText


@pytest.mark.parametrize(("target", "names"), [
    ("pkg.mod:parse_duration", ["parse_duration"]),
    ("pkg.mod:RateMeter.add", ["RateMeter.add", "add", "RateMeter"]),
    ("pkg.mod:RateMeter.__init__", ["RateMeter.__init__", "RateMeter"]),  # a dunder only through its class
    ("pkg.cli:main<argv>", ["main"]),  # a form of the unit `main`
    ("pkg.mod:<module>", []),
    ("pkg.mod:make.<locals>.inner", ["make.inner", "inner", "make"]),
])
def test_the_names_of_an_operation(target: str, names: list[str]) -> None:
    assert names_of(target) == names


def _said(*lines: str, source: str = "the title") -> PullRequestText:
    return PullRequestText([Passage(source, line) for line in lines])


@pytest.mark.parametrize(("text", "target", "named"), [
    ("Fix parse_duration for negative values", "pkg.mod:parse_duration", True),
    ("RateMeter: count each sample once", "pkg.mod:RateMeter.add", True),  # its class
    ("Make `add` count each sample once", "pkg.mod:RateMeter.add", True),  # backticks
    ("meter.add() now counts each sample once", "pkg.mod:RateMeter.add", True),  # dotted and called
    ("add(x) counts each sample once", "pkg.mod:RateMeter.add", True),  # called
    ("Add a rate meter", "pkg.mod:RateMeter.add", False),  # English, and another case
    ("we add each sample once", "pkg.mod:RateMeter.add", False),  # a plain word, not marked as code
    ("Fix parse of negative durations", "pkg.mod:parse", False),  # ditto: precision before recall
    ("Fix `parse` of negative durations", "pkg.mod:parse", True),
    ("parse_durations is faster", "pkg.mod:parse_duration", False),  # another name, not a prefix
    ("Speed up reparse_duration", "pkg.mod:parse_duration", False),
    ("`f` is faster", "pkg.mod:f", False),  # too short to mean anything
])
def test_when_a_text_names_an_operation(text: str, target: str, named: bool) -> None:
    assert (mention(_said(text), [target]) is not None) is named


@pytest.mark.parametrize("text", [
    "Refactor parse_duration", "Simplify the hour conversion, streamline RateMeter.add",
    "Speed up `parse`", "parse_duration: no functional change", "Rename a local in parse_duration",
    "Tidy RateMeter", "Clean up parse_duration", "Optimise RateMeter.add", "Typo in parse_duration",
])
def test_a_change_that_claims_to_keep_behaviour_explains_nothing(text: str) -> None:
    assert mention(_said(text), ["pkg.mod:parse_duration", "pkg.mod:RateMeter.add", "pkg.mod:parse"]) is None


def test_a_subject_that_claims_to_keep_behaviour_speaks_for_its_message() -> None:
    message = "Refactor the parser\n\nparse_duration now goes through a table."
    assert mention(_said(message, source="commit 1a2b3c4"), ["pkg.mod:parse_duration"]) is None
    claimed = "Read hours\n\nparse_duration is refactored, and other code reads 1h."
    assert mention(_said(claimed, source="commit 1a2b3c4"), ["pkg.mod:parse_duration"]) is None  # the line
    assert mention(_said("Read hours\n\nparse_duration now reads 1h.", source="commit 1a2b3c4"),
                   ["pkg.mod:parse_duration"]) == Mention("commit 1a2b3c4", "parse_duration now reads 1h.")


def test_the_first_naming_line_is_quoted_with_its_source() -> None:
    text = PullRequestText([
        Passage("the title", "Speed up the meter"),
        Passage("commit 1a2b3c4", "Meter speed-up\n\nRateMeter.add keeps a running total now.\nMore text."),
        Passage("CHANGES.rst", "- RateMeter counts faster"),
    ])
    found = mention(text, ["pkg.mod:RateMeter.add"])
    assert found == Mention("commit 1a2b3c4", "RateMeter.add keeps a running total now.")
    assert str(found) == 'commit 1a2b3c4: "RateMeter.add keeps a running total now."'
    long = mention(_said("x " * 200 + "parse_duration"), ["pkg.mod:parse_duration"])
    assert long is not None and len(long.quote) == 160 and long.quote.endswith("…")


def test_a_changed_docstring_names_its_unit_only() -> None:
    text = PullRequestText([Passage("the docstring of pkg.mod:helper", "Rounds half to even now.",
                                    unit="pkg.mod:helper")])
    assert mention(text, ["pkg.api:public", "pkg.mod:helper"]) == \
        Mention("the docstring of pkg.mod:helper", "Rounds half to even now.")
    assert mention(text, ["pkg.api:public"]) is None  # a docstring's words name nothing else


def test_a_changed_docstring_whose_added_lines_are_blank_explains_nothing() -> None:
    text = PullRequestText([Passage("the docstring of pkg.mod:helper", "\n  \n", unit="pkg.mod:helper")])
    assert mention(text, ["pkg.mod:helper"]) is None


@pytest.mark.parametrize(("text", "target", "named"), [
    ("Allow a UTC prefix in TzInfoParser", "pkg.parser:TzinfoParser.parse", True),  # other capitals
    ("Allow a UTC prefix in the tzinfoparser", "pkg.parser:TzinfoParser.parse", False),  # not distinctive
    ("Treat center like a block-level element", "pkg.util:BLOCK_LEVEL_ELEMENTS", True),  # three words
    ("Parse ISO week dates without a day", "pkg.mod:parse_iso_week_date", True),
    ("Fix the block level", "pkg.util:BLOCK_LEVEL_ELEMENTS", False),  # not all its words
    ("Regenerate idnadata.py with correct data", "pkg.idnadata:codepoint_classes", True),  # its file
    ("Regenerate pkg/idnadata.py with correct data", "pkg.idnadata:codepoint_classes", True),
    ("pkg.idnadata follows Unicode 16", "pkg.idnadata:codepoint_classes", True),  # its dotted path
    ("Fix pkg.idnadata.encode for digits", "pkg.idnadata:codepoint_classes", False),  # a member of it
    ("Fix __init__.py imports", "pkg:format", False),  # every package has one
])
def test_more_ways_a_text_names_an_operation(text: str, target: str, named: bool) -> None:
    assert (mention(_said(text), [target]) is not None) is named


@pytest.mark.parametrize("text", [
    "Update slugify.slugify", "Adjust parse.py", "Rework `parse_duration` (#123)",
    "Minor changes to RateMeter", "Update the parse_duration function",
])
def test_a_line_that_names_counts_whatever_its_verb(text: str) -> None:
    """A vague verb once made such a line say nothing; on real pull requests that never decided a
    difference (the benchmark's rule tallies), so the list is gone."""
    targets = ["pkg.mod:parse_duration", "pkg.slugify:slugify", "pkg.parse:RateMeter"]
    assert mention(_said(text), targets) is not None


def test_a_removed_name_is_explained_by_a_rename_that_names_it() -> None:
    text = _said("Rename `HookImplOpts` -> `HookimplOpts`")
    assert mention(text, ["pkg:HookImplOpts<export>"], removed=True) is not None
    assert mention(text, ["pkg:HookImplOpts<export>"]) is None  # a rename keeps any other behaviour
    assert mention(_said("Simplify `HookImplOpts`"), ["pkg:HookImplOpts"]) is None  # keeps behaviour


def test_a_table_entry_is_named_by_its_words_or_by_the_quoted_text_of_its_edit() -> None:
    text = PullRequestText([Passage("the title", "Add RETURNING to the keywords"),
                            Passage("the body", "Names may now be qualified: `(?:\\.\\w+)?`.")])
    assert names_entry(text, TableEntry("added", "['RETURNING']", ("RETURNING",))) == Mention(
        "the title", "Add RETURNING to the keywords")
    edited = TableEntry("changed", "[1]", (), ((r"[a-z]\w*", r"[a-z]\w*(?:\.\w+)?"),))
    assert names_entry(text, edited) is not None
    for unnamed in (TableEntry("removed", "['LIMIT']", ("LIMIT",)),
                    TableEntry("added", "['RETURN']", ("RETURN",)),  # a word of its own, not a part of one
                    # the quoted text on both sides: not what the edit changed
                    TableEntry("changed", "[2]", (), ((r"(?:\.\w+)?[a-z]", r"(?:\.\w+)?[A-Z]"),)),
                    TableEntry("removed", "[3]")):
        assert names_entry(text, unnamed) is None, unnamed


def test_a_component_prefix_names_a_plain_name_and_documenting_text_names_it_in_prose() -> None:
    """`slugify: keep dots in file names` marks `slugify` as code; a changelog line "slugify keeps
    dots now" names it as a plain word (a prose mention); a title's "slugify the name" does not."""
    [prefix] = mentions(_said("slugify: keep dots in file names"), ["pkg.text:slugify"])
    assert prefix.prose is False
    [changelog] = mentions(PullRequestText([Passage("CHANGES.rst", "- slugify keeps dots in file names")]),
                           ["pkg.text:slugify"])
    assert changelog.prose is True and changelog.source == "CHANGES.rst"
    assert not list(mentions(_said("Let users slugify the name"), ["pkg.text:slugify"]))
    other_docstring = Passage("the docstring of pkg.text:clean", "Calls slugify on each part.",
                              unit="pkg.text:clean")
    [docstring] = mentions(PullRequestText([other_docstring]), ["pkg.text:slugify"])
    assert docstring.prose is True
    changelog_word = PullRequestText([Passage("CHANGES.rst", "- Reslugify the name")])
    assert not list(mentions(changelog_word, ["pkg.text:slugify"]))  # not a whole word
