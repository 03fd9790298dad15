"""Configured objects: a change behind an attribute users set one by one, which no constructor
argument reaches, is shown by a test that sets it as a user does."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Verdict

BANNER = '''\
class Banner:
    """A line of text centred in a banner; set `uppercase` to shout."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.width = 20
        self.fill = "-"
        self.uppercase = False

    def render(self) -> str:
        text = self.text.upper() if self.uppercase else self.text
        return text.center(self.width, self.fill)
'''
# head shouts in title case: only a banner whose `uppercase` was set shows it
BANNER_HEAD = BANNER.replace("self.text.upper() if self.uppercase", "self.text.title() if self.uppercase")


@pytest.mark.slow
def test_a_change_behind_a_setting_is_shown_by_setting_it(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/banner.py": BANNER}, {"pkg/banner.py": BANNER_HEAD})
    report = run_analyze(builder, budget=20.0, max_sequences=300)
    assert report.stats.techniques["configured"] == {"attributes": 4}  # text, width, fill, uppercase
    shown = [d for d in report.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    # seen in render's result, or in the banner's observed state after the last of its settings
    assert shown and all(d.target == "pkg.banner:Banner.render" or
                         (d.target.startswith("pkg.banner:Banner.") and d.target.endswith("<set>"))
                         for d in shown), [d.target for d in shown]
    assert all(".uppercase = True" in d.test for d in shown), [d.test for d in shown]
    without = run_analyze(builder, budget=20.0, max_sequences=300,
                          components=Components.without(["configured"]))
    assert "configured" not in without.stats.techniques
    assert [d for d in without.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES] == []
