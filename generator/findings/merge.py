"""Merging repeats: one reported difference per changed line, kind and pair of values."""

from __future__ import annotations

from ..report.model import COUNTED, Difference


def merge_repeats(differences: list[Difference]) -> tuple[list[Difference], list[str]]:
    """One difference for each changed line, kind and pair of values: the others, found through
    other entry points (the callers of a changed private helper all show its new message), merge
    into the first, which counts their sequences. A note names the entry points merged away."""
    kept: dict[tuple, Difference] = {}
    merged: dict[str, list[str]] = {}
    for difference in differences:
        if difference.path is None or difference.line is None:
            kept[(id(difference),)] = difference
            continue
        same = (difference.path, difference.line, difference.side, difference.kind, difference.severity,
                difference.base, difference.head)
        first = kept.setdefault(same, difference)
        if first is not difference:
            if difference.verdict in COUNTED and first.verdict not in COUNTED:  # keep the realistic input
                kept[same], difference.count = difference, difference.count + first.count
                first, difference = difference, first
            else:
                first.count += difference.count
            first.carved_by = sorted({*first.carved_by, *difference.carved_by})
            merged.setdefault(first.target, []).append(difference.target)
    notes = [f"{len(others)} more entry point(s) showed the same difference as {target} at the same "
             f"line and were merged into it: {', '.join(sorted(set(others))[:5])}"
             + (", ..." if len(set(others)) > 5 else "") for target, others in merged.items()]
    return list(kept.values()), notes
