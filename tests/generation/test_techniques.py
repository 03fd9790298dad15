"""Tests for `difforacle.generator.generation.techniques`, the technique table: every technique it
names is documented where a user looks for it, with its default."""

from __future__ import annotations

import re

from support.paths import ROOT

from difforacle.generator.generation.techniques import NAMES, OFF_BY_DEFAULT

USAGE = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
HOW_IT_WORKS = (ROOT / "docs" / "how-it-works.md").read_text(encoding="utf-8")


def test_the_usage_page_lists_every_technique_under_the_option_that_switches_it() -> None:
    disable = USAGE[USAGE.index("`--disable COMPONENT`"):USAGE.index("`--enable COMPONENT` (repeatable)")]
    enable = USAGE[USAGE.index("`--enable COMPONENT` (repeatable)"):USAGE.index("A component both")]
    assert set(re.findall(r"`(\w+)`", disable)) & set(NAMES) == set(NAMES) - OFF_BY_DEFAULT
    assert set(re.findall(r"`(\w+)`", enable)) & set(NAMES) == set(OFF_BY_DEFAULT)


def test_how_it_works_has_a_row_per_technique_marking_those_off_by_default() -> None:
    rows = dict(re.findall(r"^\| `(\w+)`( \(off\))? \|", HOW_IT_WORKS, re.MULTILINE))
    assert set(rows) == set(NAMES)
    assert {name for name, off in rows.items() if off} == set(OFF_BY_DEFAULT)
