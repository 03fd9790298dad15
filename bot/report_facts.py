"""What the front ends read off the engine's JSON report (`difforacle.report/1`) to judge a run:
how much of the change was checked, and which differences are regressions, minor or set apart by
their verdict. The Markdown, the pull request's texts, the check's conclusion and the command
line's exit status all judge by these, so they never disagree.

One field here is the front ends' own, never the engine's: `accepted` (`{"by": login, "at": time}`),
set by the publisher on the differences a maintainer accepted on the pull request
(`bot.acceptance`). An accepted difference no longer counts: it fails no check, gets no review
comment and is listed apart."""

from __future__ import annotations

from dataclasses import dataclass, field

from difforacle.generator import COUNTED, EXPLAINED, NOT_MEASURED, Verdict


def checked_lines(report: dict) -> tuple[int, int]:
    """(changed lines, of them checked): by unit when the report has its reach (lines that ran only
    at import count as unchecked when no sequence was compared), else by its coverage."""
    reach = report.get("reach") or []
    if reach:
        return sum(unit["lines"] for unit in reach), sum(unit["run"] for unit in reach)
    coverage = report.get("coverage", {})
    return coverage.get("changed_lines", 0), coverage.get("changed_lines_covered", 0)


def ran_lines(report: dict) -> int:
    """The changed lines that ran at all, compared or not (coverage's count: an import counts)."""
    return report.get("coverage", {}).get("changed_lines_covered", 0)


def coverage_measured(report: dict) -> bool:
    """Whether changed-line coverage was measured: without it, how much was checked is unknown."""
    return report.get("coverage", {}).get("measured_by") != NOT_MEASURED


def is_minor(difference: dict) -> bool:
    """Only the message of an exception raised by the standard library or a dependency differs."""
    return difference.get("severity") == "minor"


def is_outside_declared_types(difference: dict) -> bool:
    """Only an input its operation's declared types rule out shows it (`f(None)` for a `str`)."""
    return difference.get("verdict") == Verdict.OUTSIDE_DECLARED_TYPES


def is_accepted(difference: dict) -> bool:
    """A maintainer accepted it on the pull request (`/difforacle accept`): meant, by their word."""
    return bool(difference.get("accepted"))


def is_explained(difference: dict) -> bool:
    """The pull request accounts for it (its words name the operation): most likely meant. It still
    counts (a check that fails on every difference fails on it), but comes after the unexplained."""
    return counts(difference) and difference.get("verdict") in EXPLAINED


@dataclass(frozen=True)
class Groups:
    """The report's differences in the order the front ends show them: the possible regressions, then
    those the pull request explains, then those set apart (accepted, minor, and outside the declared
    types)."""

    unexplained: list[dict]  # `fail-on: unexplained` fails on these alone; only these get review comments
    explained: list[dict]
    minor: list[dict]
    outside: list[dict]  # (a minor one is in `minor` only)
    accepted: list[dict] = field(default_factory=list)  # by a maintainer; none is minor or outside


def groups(report: dict) -> Groups:
    differences = report.get("differences", [])
    return Groups([d for d in differences if counts(d) and not is_explained(d)],
                  [d for d in differences if is_explained(d)],
                  [d for d in differences if is_minor(d)],
                  [d for d in differences if is_outside_declared_types(d) and not is_minor(d)],
                  [d for d in differences if is_accepted(d) and acceptable(d)])


def unexplained(report: dict) -> list[dict]:
    """The possible regressions: differences that count and that nothing in the pull request explains."""
    return groups(report).unexplained


def acceptable(difference: dict) -> bool:
    """Whether a maintainer's accept means anything for it: it would count if nobody had accepted it
    (minor ones and those outside the declared types fail nothing anyway)."""
    return not is_minor(difference) and difference.get("verdict", Verdict.UNEXPLAINED) in COUNTED


def counts(difference: dict) -> bool:
    """Whether the difference fails a check and sets exit status 1: not minor, a verdict that leaves
    it a possible regression (reports without verdicts count every major difference), not accepted."""
    return acceptable(difference) and not is_accepted(difference)


def behavioural(report: dict) -> list[dict]:
    """The differences that count: all but the minor ones and those outside the declared types,
    which fail no check and no exit status (the report still lists them, apart)."""
    return [difference for difference in report.get("differences", []) if counts(difference)]


def is_regression(difference: dict) -> bool:
    """Head fails where base did not: it raises, hangs or crashes, or a public name is gone.

    `fail-on: regression` fails the check only for these; other differences (a new value)
    may well be the point of the change, which only the author can tell.
    """
    if is_accepted(difference):
        return False
    if difference.get("kind") == "api":
        return True
    if not counts(difference):
        return False  # minor wording, or an input outside the declared types
    return str(difference.get("head", "")).startswith("raises") and not str(
        difference.get("base", "")).startswith("raises")
