"""Failing callbacks (component `failing`): functions given to callback parameters that raise.

Code that handles a user function's failure (the message a converter builds from the error, a
rollback) runs only when the function fails; the callback providers otherwise hand out functions
that return. Unit tests of the literal (decoded in the worker, rendered for a test, shrunk) and
of the generator; end to end, a converter whose error message changed.
"""

from __future__ import annotations

import random

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.findings.simpler_literals import simpler, weight
from difforacle.generator.generation.techniques import Components
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.worker import literals

# A configured converter gets its `func` set directly, to callables that do not fail, and covers the
# handler's lines sooner (exploring then stops early): both runs leave configured objects out, so
# that what they compare is failing callbacks alone.
ON = Components.without(["configured"])
OFF = Components.without(["failing", "configured"])


@pytest.mark.parametrize("name, exception", [("ValueError", ValueError), ("TypeError", TypeError),
                                             ("KeyError", KeyError)])
def test_a_failing_callback_raises_on_every_call_in_the_worker_and_in_its_rendered_form(
        name: str, exception: type[Exception]) -> None:
    literal = ["raises", name, "bad 'value'"]
    rendered = eval(literals.source(literal))  # what a suggested test holds
    for function in (literals.decode(literal), rendered):
        for args, kwargs in (((), {}), ((1, "x"), {"key": 2})):
            with pytest.raises(exception) as raised:
                function(*args, **kwargs)
            assert raised.value.args == ("bad 'value'",)


def test_only_the_listed_exceptions_are_spelled() -> None:
    with pytest.raises(ValueError, match="not an exception"):
        literals.source(["raises", "__import__('os').system", ""])
    with pytest.raises(KeyError):
        literals.decode(["raises", "SystemExit", ""])


def test_a_failing_callback_shrinks_its_message_and_keeps_its_exception() -> None:
    literal = ["raises", "TypeError", "message"]
    smaller = list(simpler(literal))
    assert smaller and all(s[:2] == ["raises", "TypeError"] for s in smaller)
    assert all(weight(s) < weight(literal) for s in smaller)


def _callbacks(failing: bool) -> list[list]:
    generator = ValueGenerator(random.Random(0), Constants(), failing=failing)
    return [generator.callback() for _ in range(400)]


def test_some_callbacks_fail_only_with_the_component_on() -> None:
    on = [c for c in _callbacks(True) if c[0] == "raises"]
    assert 20 < len(on) < 120  # about 15%
    assert {c[1] for c in on} == set(literals.FAILURES)
    assert any(c[2] == "" for c in on) and any(c[2] for c in on)
    assert not [c for c in _callbacks(False) if c[0] == "raises"]


# ---------------------------------------------------------------- end to end

CONVERTER = '''\
class Converted(Exception):
    pass


class FuncType:
    """Converts a value with the user's function; a ValueError becomes a message."""

    def __init__(self, func):
        self.func = func

    def convert(self, value):
        try:
            return self.func(value)
        except ValueError:
            raise Converted(f"{value!r} is not valid") from None
'''
# head reports the function's own message when it has one
MESSAGE = CONVERTER.replace('''        except ValueError:
            raise Converted(f"{value!r} is not valid") from None''', '''        except ValueError as exc:
            raise Converted(str(exc) or f"{value!r} is not valid") from None''')


def _run(builder: RepoBuilder, components: Components):
    make_pr(builder, {"pkg/__init__.py": "", "pkg/types.py": CONVERTER}, {"pkg/types.py": MESSAGE})
    return run_analyze(builder, max_sequences=600, components=components)


@pytest.mark.slow
def test_a_converter_whose_error_message_changed(builder: RepoBuilder) -> None:
    report = _run(builder, ON)
    found = [d for d in report.differences if d.target == "pkg.types:FuncType.convert"]
    assert found, [d.target for d in report.differences]
    assert found[0].reproduced  # the test passes on base and fails on head, under pytest
    assert ".throw(ValueError(" in found[0].test


def test_a_converter_whose_error_message_changed_without_failing_callbacks(builder: RepoBuilder) -> None:
    report = _run(builder, OFF)
    assert not report.differences
    assert report.coverage.changed_lines_covered < report.coverage.changed_lines  # the handler never ran
