"""What difforacle writes on a pull request, from the engine's JSON report (`difforacle.report/1`).

The summary comment (also the job summary and the check run's summary) is the report's Markdown
(`bot.markdown`) with a hidden marker first, so that the next push edits it instead of adding
another, kept below GitHub's 65,536 characters. The texts only a pull request has are here: the
check run's title and the review's body (`headline`), the review comments with one finding each
(base vs head and the `pin_base` test), the suggestion that adds the test to a changed test file,
and the annotation of a changed line.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .markdown import (
    commit_span,
    fenced,
    inline_code,
    inline_value,
    regression_test,
    render_markdown,
    verdict,
)
from .report_facts import checked_lines, coverage_measured, groups, is_regression, ran_lines

SUMMARY_MARKER = "<!-- difforacle:summary -->"
REVIEW_MARKER = "<!-- difforacle:review -->"
# what an edited summary says when the differences an earlier push showed are gone (`comment: on-difference`)
NO_LONGER_DIFFERS = ("No longer differs: the differences an earlier push of this pull request showed are "
                     "gone. This comment stays, with any acceptances, in case a later push shows them again.")
ACCEPT_HINT = ("A difference the pull request meant can be accepted by someone with write access: comment "
               "`/difforacle accept D1` (or `accept all`); it then fails nothing, on later pushes too.")
# the check run's button (the App's: a click is an event only the App that made the check run gets)
ACCEPT_ALL_ACTION = "accept-all"
ACCEPT_ALL_BUTTON = {"label": "Accept all", "identifier": ACCEPT_ALL_ACTION,
                     "description": "Accept every difference this run shows"}
COMMENT_LIMIT = 65_536  # GitHub's maximum body of an issue comment, in characters
SUMMARY_LIMIT = COMMENT_LIMIT - 1_000  # room for the truncation note


def headline(report: dict) -> str:
    """One line for the check run's title and the review's body."""
    found = groups(report)
    minor, outside, explained = len(found.minor), len(found.outside), len(found.explained)
    accepted = len(found.accepted)
    count = len(found.unexplained) + explained
    span = commit_span(report)
    if count == 0:
        text = verdict(0, *checked_lines(report), measured=coverage_measured(report), emphasis=False,
                       minor=minor, outside=outside, accepted=accepted, ran=ran_lines(report))
        return f"difforacle: {text[:1].lower()}{text[1:].rstrip('.')} ({span})"
    regressions = sum(is_regression(d) for d in report.get("differences", []))
    noun = "difference" if count == 1 else "differences"
    extra = f", {regressions} where head now fails" if regressions else ""
    extra += f", {minor} minor" if minor else ""
    extra += f", {explained} explained by the pull request" if explained else ""
    extra += f", {outside} outside the declared types" if outside else ""
    extra += f", {accepted} accepted" if accepted else ""
    return f"difforacle: {count} behavioural {noun}{extra} ({span})"


def summary_markdown(report: dict, *, inline: Collection[str] = frozenset(), notes: Iterable[str] = (),
                     limit: int = SUMMARY_LIMIT) -> str:
    """The summary comment: the report's Markdown, marked as ours; `inline` names the differences
    that also have a review comment, `notes` are publishing's own."""
    return render_markdown(report, marker=SUMMARY_MARKER, inline=inline, notes=notes, limit=limit)


def review_comment(difference: dict) -> str:
    """A review comment on the changed line: what differs and the regression test."""
    return "\n\n".join([
        REVIEW_MARKER,
        f"**difforacle: {difference['kind']} of {inline_code(difference['target'])} differs**",
        f"- base: {inline_value(difference['base'])}\n- head: {inline_value(difference['head'])}",
        "Regression test (passes on base, fails on head):",
        fenced(regression_test(difference), "python"),
    ])


def suggestion(difference: dict, anchor_text: str) -> str:
    """A review comment whose suggestion keeps the anchored line and adds the test after it."""
    return "\n\n".join([
        REVIEW_MARKER,
        f"**difforacle**: {inline_code(difference['target'])} behaves differently "
        f"(base {inline_value(difference['base'])}, head {inline_value(difference['head'])}). "
        "This pull request already changes this test file; the regression test could go here:",
        fenced(f"{anchor_text}\n\n\n{regression_test(difference)}", "suggestion"),
    ])


def annotation_message(difference: dict) -> str:
    return (f"{difference['kind']} of {difference['target']} differs: base {difference['base']}, "
            f"head {difference['head']}.\n\n{regression_test(difference)}")
