"""A parameter with no annotation is typed by what its function does with it (duck typing)."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Verdict

TYPES = '''\
class Command:
    """A command line as it ran: what was typed, and what it printed."""

    def __init__(self, script: str, output: str) -> None:
        self.script = script
        self.output = output


class Alias:
    def __init__(self, script: str) -> None:
        self.script = script
'''
RULE = '''\
def match(command):
    """Whether the rule applies: a command that printed more than it was given."""
    return len(command.output) > len(command.script)
'''


@pytest.mark.slow
def test_an_unannotated_parameter_gets_the_class_with_the_attributes_it_uses(builder: RepoBuilder) -> None:
    package = "from .types import Alias, Command\n"  # the package's types, loaded with it
    make_pr(builder, {"pkg/__init__.py": package, "pkg/types.py": TYPES, "pkg/rules.py": RULE},
            {"pkg/rules.py": RULE.replace(" > ", " >= ")})
    report = run_analyze(builder, budget=20.0, max_sequences=300)
    [difference] = [d for d in report.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    assert difference.target == "pkg.rules:match" and "Command(" in difference.test
    assert report.stats.techniques["duck"] == {"parameters": 1}
    off = run_analyze(builder, budget=20.0, max_sequences=300, components=Components.without(["duck"]))
    assert [d for d in off.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES] == []
    assert "duck" not in off.stats.techniques
