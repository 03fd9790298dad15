"""The order of the verdicts (`difforacle.generator.triage.verdicts`): a broken existing test first,
then an input outside the declared types, then the pull request's words; unexplained otherwise."""

from __future__ import annotations

from support.report_samples import sample_difference

from difforacle.generator.changes.model import Unit
from difforacle.generator.report.model import Statement, Verdict
from difforacle.generator.runtime.catalog import Operation, Parameter
from difforacle.generator.triage.pull_request import Passage, PullRequestText
from difforacle.generator.triage.verdicts import triage

TEXT = Parameter("text", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",))
OPERATIONS = {"pkg.mod:width": Operation("pkg.mod:width", "function", None, (TEXT,), (), None, None)}


def _width(arg: dict, **fields: object) -> object:
    return sample_difference(1, target="pkg.mod:width", path="pkg/mod.py", line=7, side="head",
                             statements=[Statement("pkg.mod:width", (arg,))], **fields)


NONE, WORD = {"lit": ["none"]}, {"lit": ["str", "ab"]}


def test_the_verdicts_in_order() -> None:
    said = PullRequestText([Passage("the title", "Make width count tabs")])
    broken = {"tests/test_mod.py::test_width": frozenset({"pkg.mod:width"})}
    cases = [
        (_width(WORD), None, None, Verdict.UNEXPLAINED),
        (_width(WORD), said, None, Verdict.UNEXPLAINED),  # `width`: a plain word, not marked as code
        (_width(WORD), PullRequestText([Passage("the title", "Make `width` count tabs")]), None,
         Verdict.NAMED_BY_PR),
        (_width(NONE), PullRequestText([Passage("the title", "Make `width` count tabs")]), None,
         Verdict.OUTSIDE_DECLARED_TYPES),
        (_width(NONE), None, broken, Verdict.BREAKS_EXISTING_TEST),
    ]
    for difference, text, tests, expected in cases:
        [judged] = triage([difference], OPERATIONS, text, (), tests)
        assert judged.verdict == expected, (judged, expected)
        assert bool(judged.evidence) is (expected != Verdict.UNEXPLAINED)


def test_a_changed_helper_at_the_differences_line_is_named_too() -> None:
    helper = Unit("pkg.mod", "_count_cells", "function", "modified", "pkg/mod.py", 5, 9)
    said = PullRequestText([Passage("commit 1a2b3c4", "_count_cells treats tabs as 8 cells")])
    [judged] = triage([_width(WORD)], OPERATIONS, said, [helper])
    assert (judged.verdict, judged.evidence) == (Verdict.NAMED_BY_PR, 'named by the pull request, in commit '
                                                 '1a2b3c4: "_count_cells treats tabs as 8 cells"')
    elsewhere = Unit("pkg.mod", "_count_cells", "function", "modified", "pkg/mod.py", 20, 30)
    assert triage([_width(WORD)], OPERATIONS, said, [elsewhere])[0].verdict == Verdict.UNEXPLAINED
