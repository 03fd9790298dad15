"""What difforacle writes on a pull request, from the engine's JSON report (`difforacle.report/1`).

The summary comment (also the job summary and the check run's summary) starts with a hidden
marker so that the next push edits it instead of adding another; it stays below GitHub's
65,536 characters by leaving out the details of the last findings, with a note saying how
many. Review comments carry one finding each: base vs head and the `pin_base` test.
"""

from __future__ import annotations

from difforacle.generator import (
    NOT_MEASURED,
    checked_lines,
    compress_lines,
    fenced,
    inline_code,
    inline_value,
    longest_backtick_run,
    unreached_markdown,
    verdict,
)

SUMMARY_MARKER = "<!-- difforacle:summary -->"
REVIEW_MARKER = "<!-- difforacle:review -->"
COMMENT_LIMIT = 65_536  # GitHub's maximum body of an issue comment, in characters
SUMMARY_LIMIT = COMMENT_LIMIT - 1_000  # room for the truncation note


def is_regression(difference: dict) -> bool:
    """Head fails where base did not: it raises, hangs or crashes, or a public name is gone.

    `fail-on: regression` fails the check only for these; other differences (a new value)
    may well be the point of the change, which only the author can tell.
    """
    if difference.get("kind") == "api":
        return True
    if difference.get("severity") == "minor":
        return False  # only the wording of an exception from the standard library or a dependency
    return str(difference.get("head", "")).startswith("raises") and not str(
        difference.get("base", "")).startswith("raises")


def headline(report: dict) -> str:
    differences = report.get("differences", [])
    minor = sum(d.get("severity") == "minor" for d in differences)
    count = len(differences) - minor
    span = f"{report['base'][:7]}..{report['head'][:7]}"
    if count == 0:
        measured = report.get("coverage", {}).get("measured_by") != NOT_MEASURED
        text = verdict(0, *checked_lines(report), measured=measured, emphasis=False, minor=minor)
        return f"difforacle: {text[:1].lower()}{text[1:].rstrip('.')} ({span})"
    regressions = sum(is_regression(d) for d in differences)
    noun = "difference" if count == 1 else "differences"
    extra = f", {regressions} where head now fails" if regressions else ""
    extra += f", {minor} minor" if minor else ""
    return f"difforacle: {count} behavioural {noun}{extra} ({span})"


def summary_markdown(report: dict, *, inline: set[str] = frozenset(), notes: list[str] = (),
                     limit: int = SUMMARY_LIMIT) -> str:
    """The summary comment; `inline` names the differences that also have a review comment."""
    differences = report.get("differences", [])
    head = [SUMMARY_MARKER, f"## {headline(report)}"]
    if differences:
        head.append(_table(differences, inline))
    head.append(coverage_line(report.get("coverage", {})))
    if any(unit["run"] < unit["lines"] for unit in report.get("reach", [])):
        head.append(unreached_markdown(report["reach"]))
    tail = [f"- {note}" for note in [*notes, *report.get("notes", [])]]
    tail_text = ("### Notes\n\n" + "\n".join(tail)) if tail else ""
    details = [_details(d, d.get("id", "") in inline) for d in differences]
    shown = len(details)
    while True:
        blocks = [*head, *details[:shown]]
        if shown < len(details):
            blocks.append(f"*{len(details) - shown} more finding(s) left out to stay within GitHub's comment "
                          "size; the check run and the JSON report have them all.*")
        if tail_text:
            blocks.append(tail_text)
        text = "\n\n".join(blocks) + "\n"
        if len(text) <= limit or shown == 0:
            return text if len(text) <= limit else text[: limit - 40] + "\n\n*(truncated)*\n"
        shown -= 1


def coverage_line(coverage: dict) -> str:
    total, covered = coverage.get("changed_lines", 0), coverage.get("changed_lines_covered", 0)
    if not total:
        return "No executable changed line to cover."
    text = f"Changed-line coverage: {covered} of {total} ({100 * covered // total}%)"
    branches = coverage.get("changed_branches", 0)
    if branches:
        text += f", branches {coverage.get('changed_branches_covered', 0)} of {branches}"
    uncovered = coverage.get("uncovered") or {}
    if uncovered:
        listing = "; ".join(f"{inline_code(path)} {compress_lines(lines)}"
                            for path, lines in sorted(uncovered.items()))
        text += f". Not reached: {listing} (no difference there means *not tested*, not *unchanged*)"
    return text + "."


def review_comment(difference: dict) -> str:
    """A review comment on the changed line: what differs and the regression test."""
    return "\n\n".join([
        REVIEW_MARKER,
        f"**difforacle: {difference['kind']} of {inline_code(difference['target'])} differs**",
        f"- base: {inline_value(difference['base'])}\n- head: {inline_value(difference['head'])}",
        "Regression test (passes on base, fails on head):",
        fenced(difference.get("pin_base") or difference["test"], "python"),
    ])


def suggestion(difference: dict, anchor_text: str) -> str:
    """A review comment whose suggestion keeps the anchored line and adds the test after it."""
    test = (difference.get("pin_base") or difference["test"]).rstrip("\n")
    block = f"{anchor_text}\n\n\n{test}"
    fence = "`" * max(3, longest_backtick_run(block) + 1)
    return "\n\n".join([
        REVIEW_MARKER,
        f"**difforacle**: {inline_code(difference['target'])} behaves differently "
        f"(base {inline_value(difference['base'])}, head {inline_value(difference['head'])}). "
        "This pull request already changes this test file; the regression test could go here:",
        f"{fence}suggestion\n{block}\n{fence}",
    ])


def annotation_message(difference: dict) -> str:
    return (f"{difference['kind']} of {difference['target']} differs: base {difference['base']}, "
            f"head {difference['head']}.\n\n{difference.get('pin_base') or difference['test']}")


def _table(differences: list[dict], inline: set[str]) -> str:
    rows = ["| | target | kind | base | head | where |", "|---|---|---|---|---|---|"]
    for difference in differences:
        where = (inline_code(f"{difference['path']}:{difference['line']}") if difference.get("path")
                 and difference.get("line") else "")
        if difference.get("id") in inline:
            where += " (review comment)"
        kind = difference["kind"] + (" (minor)" if difference.get("severity") == "minor" else "")
        cells = [difference.get("id", ""), inline_code(difference["target"]), kind,
                 inline_value(difference["base"]), inline_value(difference["head"]), where]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def _details(difference: dict, inline: bool) -> str:
    title = f"{difference.get('id', '')} {difference['target']} ({difference['kind']})"
    body = [f"Regression test (passes on base, fails on head):\n\n"
            f"{fenced(difference.get('pin_base') or difference['test'], 'python')}"]
    if difference.get("pin_head"):
        body.append(f"If the change is intended, the test to keep (passes on head):\n\n"
                    f"{fenced(difference['pin_head'], 'python')}")
    if inline:
        body.insert(0, "Also posted as a review comment on the changed line.")
    return f"<details><summary>{title}</summary>\n\n" + "\n\n".join(body) + "\n\n</details>"

