"""The Report's outside forms: JSON (schema `difforacle.report/1`), markdown, and test files.

The JSON form is the contract with `bot` and other readers, so it is validated against the
shipped schema before it is written. Every output is deterministic (no timestamps), so runs
can be compared and re-published without spurious changes.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import TYPE_CHECKING

from .json_form import _coverage_to_json
from .model import NOT_MEASURED, Coverage, Difference, Report, Stats

if TYPE_CHECKING:
    pass


_VALUE_LIMIT = 200  # characters of a base/head value shown in markdown


# ---------------------------------------------------------------- JSON
























# ---------------------------------------------------------------- markdown


def render_markdown(report: Report) -> str:
    """A human-readable report for a PR comment or job summary; deterministic for the same report."""
    major = [d for d in report.differences if d.severity != "minor"]
    minor = [d for d in report.differences if d.severity == "minor"]
    reach = {"reach": [asdict(unit) for unit in report.reach], "coverage": _coverage_to_json(report.coverage)}
    blocks = [
        f"## difforacle: {_short_sha(report.base)}..{_short_sha(report.head)}",
        *([f"**Partial report:** the run stopped on an internal error while {report.error.phase} "
           f"({inline_value(report.error.message)}); see the notes."] if report.error else []),
        verdict(len(major), *checked_lines(reach), measured=report.coverage.measured_by != NOT_MEASURED,
                minor=len(minor)),
        _coverage_markdown(report.coverage),
        unreached_markdown(reach["reach"]),
        *(_difference_markdown(d) for d in major),
        *([MINOR_SECTION, *(_difference_markdown(d) for d in minor)] if minor else []),
        _stats_markdown(report.stats),
    ]
    if report.notes:
        blocks.append("### Notes\n\n" + "\n".join(_bullet(note) for note in report.notes))
    return "\n\n".join(block for block in blocks if block) + "\n"




def _short_sha(sha: str) -> str:
    # Only hex object names are shortened: a ref name like "feature/x" must stay whole.
    return sha[:7] if re.fullmatch(r"[0-9a-f]{8,}", sha) else sha


MINOR_SECTION = ("### Minor differences\n\nOnly the message of an exception raised by the standard library "
                 "or a dependency differs (`fail-on: regression` ignores these).")


def checked_lines(data: dict) -> tuple[int, int]:
    """(changed lines, of them checked) of a JSON report: by unit when it has its reach (lines that
    ran only at import count as unchecked when no sequence was compared), else by its coverage."""
    reach = data.get("reach") or []
    if reach:
        return sum(unit["lines"] for unit in reach), sum(unit["run"] for unit in reach)
    coverage = data.get("coverage", {})
    return coverage.get("changed_lines", 0), coverage.get("changed_lines_covered", 0)


def verdict(differences: int, changed: int, run: int, *, measured: bool = True, emphasis: bool = True,
            minor: int = 0) -> str:
    """The headline: what was found, and how much of the change the finding speaks for. A clean run
    whose changed lines never ran says "nothing could be checked", never "no difference". `minor`:
    differences only in the message of an exception from outside the project, counted apart."""
    text = _verdict(differences, changed, run, measured=measured, emphasis=emphasis)
    if minor:
        noun = "difference" if minor == 1 else "differences"
        text += f" {minor} minor {noun} in exception messages from outside the project."
    return text


def _verdict(differences: int, changed: int, run: int, *, measured: bool, emphasis: bool) -> str:
    unrun = changed - run
    if differences:
        noun = "difference" if differences == 1 else "differences"
        found = f"{differences} behavioural {noun}"
        text = f"{f'**{found}**' if emphasis else found} in the changed code."
        if measured and unrun:
            text += f" Nothing could be checked for {_count_lines(unrun)} of {changed}."
        return text
    if not measured:
        return ("No behavioural difference found, but changed-line coverage was not measured: how much of "
                "the change was checked is unknown.")
    if not changed:
        return "No behavioural difference: no changed line of importable code to run."
    if not run:
        return f"Nothing could be checked: none of the {_count_lines(changed)} ran."
    if unrun:
        return (f"No behavioural difference in the {_count_lines(run)} that ran; "
                f"nothing could be checked for {_count_lines(unrun)}.")
    return f"No behavioural difference in the {_count_lines(changed)}, all of which ran."


def _count_lines(count: int) -> str:
    return f"{count} changed line" + ("" if count == 1 else "s")


def _coverage_markdown(coverage: Coverage) -> str:
    covered, total = coverage.changed_lines_covered, coverage.changed_lines
    if coverage.measured_by == NOT_MEASURED:
        return "Changed-line coverage: not measured."
    if not total:
        return ""  # the headline says there was no changed line to run
    # floored: never shows 100% with lines missing
    line = f"Changed-line coverage: covered {covered} of {total} changed lines ({100 * covered // total}%)"
    if coverage.changed_branches:
        line += (f" and {coverage.changed_branches_covered} of {coverage.changed_branches} "
                 "branches out of them")
    uncovered = [(path, lines) for path, lines in sorted(coverage.uncovered.items()) if lines]
    if not uncovered:
        return line + "."
    listing = "\n".join(f"- {inline_code(path)}: {compress_lines(lines)}" for path, lines in uncovered)
    return f"{line}. Not covered:\n\n{listing}"


def unreached_markdown(reach: list[dict]) -> str:
    """The changed units (the report's JSON `reach`) whose changed lines did not all run, each with
    why; empty when every changed line ran."""
    rows = [f"- {inline_code(unit['unit'])} ({inline_code(unit['path'])}): {unit['run']} of "
            f"{_count_lines(unit['lines'])} ran; {unit['reason']}"
            for unit in reach if unit["run"] < unit["lines"]]
    return "### Changed code that did not run\n\n" + "\n".join(rows) if rows else ""


def compress_lines(lines: list[int]) -> str:
    """`[3, 10, 11, 12, 14]` -> `"3, 10-12, 14"`: short enough to read in a comment."""
    runs: list[list[int]] = []
    for number in sorted(set(lines)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ", ".join(str(start) if start == end else f"{start}-{end}" for start, end in runs)


def _difference_markdown(difference: Difference) -> str:
    parts = [
        f"### {difference.kind}: {inline_code(difference.target)}",
        _location(difference),
        f"- base: {inline_value(difference.base)}\n- head: {inline_value(difference.head)}",
    ]
    if difference.count > 1:
        parts.append(f"Seen in {difference.count} sequences.")
    if difference.reproduced is False:
        parts.append("**Not reproduced:** pytest did not confirm this test in a fresh process; "
                     "treat with care.")
    parts.append("Regression test (passes on base, fails on head):")
    parts.append(fenced(difference.pin_base, "python"))
    if difference.pin_head:
        summary = "<details><summary>If the change is intended: the test to keep (passes on head)</summary>"
        parts.append(f"{summary}\n\n{fenced(difference.pin_head, 'python')}\n\n</details>")
    return "\n\n".join(parts)


def _location(difference: Difference) -> str:
    if difference.path is None:
        return "Location unknown."
    if difference.line is None:
        return inline_code(difference.path)
    return inline_code(f"{difference.path}:{difference.line}")


def inline_value(text: str) -> str:
    """A base/head value as inline code, on one line and cut to about `_VALUE_LIMIT` characters."""
    if not text:
        return "*(empty)*"
    flat = text.replace("\r\n", "\n").replace("\n", "\\n")
    if len(flat) > _VALUE_LIMIT:
        flat = flat[:_VALUE_LIMIT] + "…"
    return inline_code(flat)


def inline_code(text: str) -> str:
    """Inline code that survives any backticks in `text` (CommonMark: a longer fence, padded if needed)."""
    fence = "`" * (longest_backtick_run(text) + 1)
    padded = text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" "))
    pad = " " if padded and text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, language: str) -> str:
    """A fenced code block longer than any backtick run inside, so the test's own text cannot close it."""
    fence = "`" * max(3, longest_backtick_run(text) + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _stats_markdown(stats: Stats) -> str:
    """The figures a maintainer can read; the internal counters stay in the JSON report."""
    rate = stats.sequences_per_second
    if not rate and stats.seconds > 0:
        rate = stats.sequences / stats.seconds
    text = f"{stats.sequences} sequences in {stats.seconds:.2f} s ({rate:.1f} sequences per second)"
    if stats.sequences:
        text += f"; {stats.kept} of them ran changed code and were run again on both commits"
    if stats.crashed:
        text += f"; {stats.crashed} crashed their process or hung"
    return f"### Stats\n\n{text}."


def _bullet(text: str) -> str:
    # Continuation lines are indented so a multi-line note stays inside its bullet.
    return "- " + text.strip().replace("\n", "\n  ")


# ---------------------------------------------------------------- test files






