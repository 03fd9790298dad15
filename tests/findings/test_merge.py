"""Tests for `difforacle.generator.findings.merge`'s `merge_repeats`: one difference per changed
line and values."""

from __future__ import annotations

from difforacle.generator.findings.merge import merge_repeats
from difforacle.generator.report.model import Difference, Verdict


def _difference(target: str, line: int | None = 136, head: str = "raises TypeError: not iterable",
                kind: str = "exception", count: int = 1) -> Difference:
    return Difference(id="", kind=kind, target=target, path="pkg/_utils.py" if line else None, line=line,
                      base="raises TypeError: has no len()", head=head, test="def test(): ...", key="1/!",
                      count=count, side="head", severity="minor")


def test_the_same_values_at_the_same_line_through_other_entry_points_merge_into_the_first() -> None:
    differences = [_difference("pkg._utils:escape", count=2), _difference("pkg.api:string", count=3),
                   _difference("pkg.items:Key"), _difference("pkg.api:other", head="raises ValueError"),
                   _difference("pkg.api:lost", line=None), _difference("pkg.api:state", kind="state")]
    kept, notes = merge_repeats(differences)
    assert [d.target for d in kept] == ["pkg._utils:escape", "pkg.api:other", "pkg.api:lost", "pkg.api:state"]
    assert kept[0].count == 6  # the sequences of all three
    assert notes == ["2 more entry point(s) showed the same difference as pkg._utils:escape at the same "
                     "line and were merged into it: pkg.api:string, pkg.items:Key"]


def test_nothing_to_merge() -> None:
    differences = [_difference("a:f"), _difference("a:g", line=137)]
    assert merge_repeats(differences) == (differences, [])


def test_a_realistic_repeat_is_the_one_kept() -> None:
    outside = _difference("pkg.api:string", count=2)
    outside.verdict, outside.evidence = Verdict.OUTSIDE_DECLARED_TYPES, "`None` for `text: str`"
    realistic = _difference("pkg._utils:escape", count=3)
    kept, notes = merge_repeats([outside, realistic])
    assert kept == [realistic] and realistic.count == 5 and realistic.verdict == Verdict.UNEXPLAINED
    assert notes == ["1 more entry point(s) showed the same difference as pkg._utils:escape at the same "
                     "line and were merged into it: pkg.api:string"]
