"""The report in Markdown, and the Markdown helpers every text difforacle writes for people shares.

One renderer, from the report's JSON form (`difforacle.report/1`), serves the command line
(stdout, `--markdown FILE`, `demo`) and the pull request (the summary comment, the job summary,
the check run's summary): the App's report arrives as JSON from its sandbox, and one layout means
both say the same things the same way. The pull request adds its options: a hidden marker, which
differences also have a review comment, publishing's own notes, and a size limit. The output is
deterministic (no timestamps), so a re-run publishes nothing new for the same report.

The helpers (inline code and fenced blocks that survive backticks, values cut to one line,
compressed line lists) are the only copies: the pull request's other texts use them too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from .report_facts import (
    checked_lines,
    coverage_measured,
    groups,
    is_accepted,
    is_minor,
    is_outside_declared_types,
    is_regression,
    ran_lines,
)

VALUE_LIMIT = 200  # characters of a base/head value shown
MINOR_SECTION = ("### Minor differences\n\nOnly the message of an exception raised by the standard library "
                 "or a dependency differs (`fail-on: regression` ignores these).")
EXPLAINED_SECTION = ("### Explained by the pull request\n\nThe pull request's own words (its title, body, "
                     "commit messages, changelog or changed docstrings) name the operation of these: most "
                     "likely meant. Each is folded, with the line that names it.")
OUTSIDE_SECTION = ("### Outside the declared types\n\nOnly an input that its operation's declared types rule "
                   "out (such as `None` for a `str`) shows these; they fail no check.")
ACCEPTED_SECTION = ("### Accepted on the pull request\n\nA maintainer accepted these with `/difforacle "
                    "accept`: they fail no check and get no review comment, on this push and on later ones "
                    "that show the same difference (same operation, kind and input).")
UNCOVERED_CAVEAT = "no difference there means *not tested*, not *unchanged*"


def render_markdown(report: dict, *, marker: str = "", inline: Collection[str] = frozenset(),
                    notes: Iterable[str] = (), limit: int | None = None) -> str:
    """The report for people: the commits, the verdict, the differences' table, coverage, the changed
    code that did not run, each difference's details (the minor ones apart), stats and notes.

    For the pull request: `marker` comes first (hidden; it finds the comment again), `inline` names
    the differences that also have a review comment, `notes` (publishing's own) precede the
    report's, and the text stays within `limit` characters by leaving out the details of the last
    differences, with a note saying how many (the table still lists them all).
    """
    found = groups(report)
    head = [
        marker,
        f"## difforacle: {commit_span(report)}",
        _partial_markdown(report.get("error")),
        verdict(len(found.unexplained) + len(found.explained), *checked_lines(report),
                measured=coverage_measured(report), ran=ran_lines(report), minor=len(found.minor),
                regressions=sum(is_regression(d) for d in found.unexplained), outside=len(found.outside),
                explained=len(found.explained), accepted=len(found.accepted)),
        _table_markdown(report.get("differences", []), inline),
        _coverage_markdown(report),
        _unreached_markdown(report.get("reach") or []),
    ]
    details = [_difference_markdown(d, d.get("id") in inline) for d in found.unexplained]
    sections = ((EXPLAINED_SECTION, found.explained), (ACCEPTED_SECTION, found.accepted),
                (MINOR_SECTION, found.minor), (OUTSIDE_SECTION, found.outside))
    for section, apart in sections:
        folded = section in (EXPLAINED_SECTION, ACCEPTED_SECTION)
        shown = [_difference_markdown(d, d.get("id") in inline, folded=folded) for d in apart]
        if shown:  # the section's heading goes with its first difference, so it is never left alone
            details += [f"{section}\n\n{shown[0]}", *shown[1:]]
    tail = [_stats_markdown(report.get("stats", {})),
            _notes_markdown([*notes, *map(safe_text, report.get("notes", []))])]
    return _within(limit, head, details, tail)


def _within(limit: int | None, head: list[str], details: list[str], tail: list[str]) -> str:
    """All of it, or as many details as fit in `limit` with a note on the rest; cut as a last resort."""
    shown = len(details)
    while True:
        left_out = len(details) - shown
        note = (f"*{left_out} more finding(s) left out to stay within GitHub's comment size; the check "
                "run and the JSON report have them all.*") if left_out else ""
        text = _blocks([*head, *details[:shown], note, *tail])
        if limit is None or len(text) <= limit:
            return text
        if not shown:
            return text[: limit - 40] + "\n\n*(truncated)*\n"
        shown -= 1


def _blocks(blocks: Iterable[str]) -> str:
    return "\n\n".join(block for block in blocks if block) + "\n"


def commit_span(report: dict) -> str:
    """`base..head`, each a short commit name."""
    return f"{_short_sha(report['base'])}..{_short_sha(report['head'])}"


def _short_sha(sha: str) -> str:
    # Only hex object names are shortened: a ref name like "feature/x" must stay whole.
    return sha[:7] if re.fullmatch(r"[0-9a-f]{8,}", sha) else sha


def _partial_markdown(error: dict | None) -> str:
    if not error:
        return ""
    return (f"**Partial report:** the run stopped on an internal error while {error['phase']} "
            f"({inline_value(error['message'])}); see the notes.")


# ---------------------------------------------------------------- the headline


def verdict(differences: int, changed: int, run: int, *, measured: bool = True, emphasis: bool = True,
            minor: int = 0, regressions: int = 0, outside: int = 0, explained: int = 0,
            accepted: int = 0, ran: int = 0) -> str:
    """The headline: what was found, and how much of the change the finding speaks for. A clean run
    whose changed lines never ran says "nothing could be checked", never "no difference".
    `regressions`: of the differences, those where head now fails; `minor`: differences only in the
    message of an exception from outside the project, counted apart; `outside`: differences only an
    input outside the declared types shows, counted apart too; `explained`: of the differences, those
    the pull request explains (the others lead, as possible regressions); `accepted`: differences a
    maintainer accepted on the pull request, counted apart. `run` counts the changed lines checked
    (run by a compared call), `ran` those that ran at all (an import too): lines that ran only at
    import were not checked, and the headline says so rather than that they did not run."""
    text = _verdict(differences, changed, run, measured=measured, emphasis=emphasis, regressions=regressions,
                    explained=explained, ran=ran)
    if minor:
        noun = "difference" if minor == 1 else "differences"
        text += f" {minor} minor {noun} in exception messages from outside the project."
    if outside:
        noun = "difference" if outside == 1 else "differences"
        text += f" {outside} {noun} only on inputs outside the declared types."
    if accepted:
        noun = "difference" if accepted == 1 else "differences"
        text += f" {accepted} {noun} accepted on the pull request."
    return text


def _verdict(differences: int, changed: int, run: int, *, measured: bool, emphasis: bool,
             regressions: int, explained: int = 0, ran: int = 0) -> str:
    unrun = changed - run
    if differences:
        noun = "difference" if differences == 1 else "differences"
        found = f"{differences} behavioural {noun}"
        failing = f", {regressions} where head now fails" if regressions else ""
        text = f"{f'**{found}**' if emphasis else found} in the changed code{failing}."
        if explained:
            text += " " + _explained(differences - explained, explained)
        if measured and unrun:
            text += f" Nothing could be checked for {_count_lines(unrun)} of {changed}."
        return text
    if not measured:
        return ("No behavioural difference found, but changed-line coverage was not measured: how much of "
                "the change was checked is unknown.")
    if not changed:
        return "No behavioural difference: no changed line of importable code to run."
    if not run and ran:  # they ran at import: no call compared what they do
        if ran >= changed:
            return (f"Nothing could be checked: the {_count_lines(changed)} ran only at import, and no call "
                    f"compared what {'it does' if changed == 1 else 'they do'}.")
        return (f"Nothing could be checked: {ran} of the {_count_lines(changed)} ran, only at import, and no "
                "call compared what they do; the others did not run.")
    if not run:
        return f"Nothing could be checked: none of the {_count_lines(changed)} ran."
    if unrun:
        return (f"No behavioural difference in the {_count_lines(run)} that ran; "
                f"nothing could be checked for {_count_lines(unrun)}.")
    return f"No behavioural difference in the {_count_lines(changed)}, all of which ran."


def _explained(possible: int, explained: int) -> str:
    """How the differences split: the possible regressions lead, the explained follow."""
    if not possible:
        return "The pull request explains " + ("it." if explained == 1 else f"all {explained}.")
    return (f"{possible} possible regression{'' if possible == 1 else 's'} (nothing in the pull request "
            f"explains {'it' if possible == 1 else 'them'}); {explained} the pull request explains.")


def _count_lines(count: int) -> str:
    return f"{count} changed line" + ("" if count == 1 else "s")


# ---------------------------------------------------------------- sections


def _table_markdown(differences: list[dict], inline: Collection[str]) -> str:
    """One row per difference, in the report's order: enough to review them at a glance."""
    if not differences:
        return ""
    rows = ["| | target | kind | base | head | where |", "|---|---|---|---|---|---|"]
    for difference in differences:
        where = _location(difference) or ""
        if difference.get("id") in inline:
            where += " (review comment)"
        apart = ("minor" if is_minor(difference) else
                 "outside declared types" if is_outside_declared_types(difference) else
                 f"accepted by @{difference['accepted'].get('by', '?')}" if is_accepted(difference) else "")
        kind = difference["kind"] + (f" ({apart})" if apart else "")
        cells = [difference.get("id", ""), inline_code(difference["target"]), kind,
                 inline_value(difference["base"]), inline_value(difference["head"]), where]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def _coverage_markdown(report: dict) -> str:
    if not coverage_measured(report):
        return "Changed-line coverage: not measured."
    coverage = report.get("coverage", {})
    covered, total = coverage.get("changed_lines_covered", 0), coverage.get("changed_lines", 0)
    if not total:
        return ""  # the headline says there was no changed line to run
    # floored: never shows 100% with lines missing
    line = f"Changed-line coverage: covered {covered} of {total} changed lines ({100 * covered // total}%)"
    branches = coverage.get("changed_branches", 0)
    if branches:
        line += f" and {coverage.get('changed_branches_covered', 0)} of {branches} branches out of them"
    uncovered = [(path, lines) for path, lines in sorted((coverage.get("uncovered") or {}).items()) if lines]
    if not uncovered:
        return line + "."
    listing = "\n".join(f"- {inline_code(path)}: {compress_lines(lines)}" for path, lines in uncovered)
    return f"{line}. Not covered ({UNCOVERED_CAVEAT}):\n\n{listing}"


def _unreached_markdown(reach: list[dict]) -> str:
    """The changed units whose changed lines were not all checked (run by a compared call), each
    with why; empty when all were. Not "did not run": a line run only at import ran, unchecked."""
    rows = [f"- {inline_code(unit['unit'])} ({inline_code(unit['path'])}): {unit['run']} of "
            f"{_count_lines(unit['lines'])} checked; {unit['reason']}"
            for unit in reach if unit["run"] < unit["lines"]]
    return "### Changed code that was not checked\n\n" + "\n".join(rows) if rows else ""


def _difference_markdown(difference: dict, inline: bool, folded: bool = False) -> str:
    """What the table has no room for: where exactly, how often, whether pytest confirmed it, and
    the two tests; `folded`: all but the title and the evidence in a `<details>` block."""
    title = f"{difference.get('id', '')} {difference['kind']}: {inline_code(difference['target'])}"
    location = _location(difference)
    on_base = " on base" if location and difference.get("side") == "base" else ""  # a line removed
    evidence = difference.get("evidence", "")
    said = [evidence_text(evidence[:1].upper() + evidence[1:]) + "."] if evidence else []
    shown = [f"### {title.strip()}", *said]
    if not evidence and difference.get("verdict", "unexplained") == "unexplained":
        shown.append(_why_unexplained(difference.get("closest") or []))
    if is_accepted(difference):
        shown.append(f"Accepted by @{difference['accepted'].get('by', '?')}.")
    parts = [f"At {location}{on_base}." if location else "Location unknown."]
    if difference.get("entries"):
        parts.append(_entries_markdown(difference["entries"]))
    if difference.get("direct"):
        parts.append("Reached directly: its test calls a changed private function or method that no code of "
                     "its module calls by name.")
    if inline:
        parts.append("Also posted as a review comment on the changed line.")
    if difference.get("count", 1) > 1:
        parts.append(f"Seen in {difference['count']} sequences.")
    if difference.get("reproduced") is False:
        parts.append("**Not reproduced:** pytest did not confirm this test in a fresh process; "
                     "treat with care.")
    elif "reproduced" in difference and difference["reproduced"] is None:
        parts.append("**Not checked:** the run's time ran out before pytest could run this test in a fresh "
                     "process; confirmation showed the difference.")
    parts.append("Regression test (passes on base, fails on head):")
    parts.append(fenced(regression_test(difference), "python"))
    if difference.get("pin_head"):
        summary = "<details><summary>If the change is intended: the test to keep (passes on head)</summary>"
        parts.append(f"{summary}\n\n{fenced(difference['pin_head'], 'python')}\n\n</details>")
    if folded:
        parts = ["<details><summary>Where, and its tests</summary>", *parts, "</details>"]
    return "\n\n".join([*shown, *parts])


CLOSEST_SHOWN = 3  # near misses listed for an unexplained difference


def _why_unexplained(closest: list[str]) -> str:
    """What the triage looked for and what came closest, so that a maintainer sees why nothing
    counted."""
    looked = ("Nothing in the pull request accounts for it: no existing test that calls it breaks, no test "
              "the pull request adds shows it, and its words, definitions and values do not name it")
    if not closest:
        return looked + "."
    more = "; ..." if len(closest) > CLOSEST_SHOWN else ""
    listed = "; ".join(map(evidence_text, closest[:CLOSEST_SHOWN])) + more
    return f"{looked}. Closest: {listed}."


ENTRIES_SHOWN = 10  # entries of a table listed by name; the rest are counted


def _entries_markdown(entries: list[dict]) -> str:
    """A table's entries that differ, by change: "...: added `['ASC']`; removed `[34]`."."""
    by_change: dict[str, list[str]] = {}
    for entry in entries[:ENTRIES_SHOWN]:
        by_change.setdefault(entry["change"], []).append(inline_code(entry["entry"]))
    listed = "; ".join(f"{change} {', '.join(names)}" for change, names in by_change.items())
    more = f"; and {len(entries) - ENTRIES_SHOWN} more" if len(entries) > ENTRIES_SHOWN else ""
    return f"Entries of the table that differ: {listed}{more}."


def regression_test(difference: dict) -> str:
    """The test that passes on base and fails on head (`pin_base`; `test` in older reports)."""
    return difference.get("pin_base") or difference["test"]


def _location(difference: dict) -> str:
    path, line = difference.get("path"), difference.get("line")
    if not path:
        return ""
    return inline_code(f"{path}:{line}" if line else path)


def _stats_markdown(stats: dict) -> str:
    """The figures a maintainer can read; the internal counters stay in the JSON report."""
    sequences, seconds = stats.get("sequences", 0), stats.get("seconds", 0.0)
    rate = stats.get("sequences_per_second") or (sequences / seconds if seconds > 0 else 0.0)
    text = f"{sequences} sequences in {seconds:.2f} s ({rate:.1f} sequences per second)"
    if sequences:
        text += f"; {stats.get('kept', 0)} of them ran changed code and were run again on both commits"
    if stats.get("crashed"):
        text += f"; {stats['crashed']} crashed their process or hung"
    return f"### Stats\n\n{text}."


def _notes_markdown(notes: list[str]) -> str:
    # Continuation lines are indented so a multi-line note stays inside its bullet.
    bullets = ["- " + note.strip().replace("\n", "\n  ") for note in notes]
    return "### Notes\n\n" + "\n".join(bullets) if bullets else ""


# ---------------------------------------------------------------- Markdown helpers


# what Markdown reads as markup, escaped by a backslash in text quoted from the pull request
MARKUP = re.compile(r"([\\`*_\[\]|~#!])")


QUOTED = re.compile(r'"(.*)"', re.DOTALL)  # the pull request's words in evidence: `in the title: "..."`


def evidence_text(text: str) -> str:
    """A verdict's evidence or a near miss: the engine's own sentence (its code spans kept) with
    HTML, mentions and addresses neutralised, and the pull request's words it quotes as plain text."""
    found = QUOTED.search(text)
    if found is None:
        return safe_text(text)
    return (safe_text(text[:found.start()]) + '"' + quoted_text(found[1]) + '"'
            + safe_text(text[found.end():]))


def quoted_text(text: str) -> str:
    """Text that quotes the pull request or the project (evidence, near misses) as plain text on one
    line: no markup, no HTML (so no comment can open or close the bot's hidden state), no mention
    (`@team` gets a word joiner) and no link; it cannot pass for the bot's own words."""
    return MARKUP.sub(r"\\\1", safe_text(" ".join(text.split())))


def safe_text(text: str) -> str:
    """Text from the run (a report's notes) with HTML, mentions and addresses neutralised (a word
    joiner after `@` and in `://`), its Markdown kept."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "@\u2060")
            .replace("://", ":\u2060//"))


def inline_value(text: str) -> str:
    """A base/head value as inline code, on one line and cut to about `VALUE_LIMIT` characters."""
    if not text:
        return "*(empty)*"
    flat = text.replace("\r\n", "\n").replace("\n", "\\n")
    if len(flat) > VALUE_LIMIT:
        flat = flat[:VALUE_LIMIT] + "…"
    return inline_code(flat)


def inline_code(text: str) -> str:
    """Inline code that survives any backticks in `text` (CommonMark: a longer fence, padded if needed)."""
    fence = "`" * (_longest_backtick_run(text) + 1)
    padded = text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" "))
    pad = " " if padded and text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, language: str) -> str:
    """A fenced code block longer than any backtick run inside, so the text cannot close it."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def compress_lines(lines: list[int]) -> str:
    """`[3, 10, 11, 12, 14]` -> `"3, 10-12, 14"`: short enough to read in a comment."""
    runs: list[list[int]] = []
    for number in sorted(set(lines)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ", ".join(str(start) if start == end else f"{start}-{end}" for start, end in runs)
