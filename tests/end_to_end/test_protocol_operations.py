"""Protocol operations: copy, deepcopy, hash, format, len, iteration, `reversed`, `in`, and arithmetic
and comparisons with standard values (plain and reflected) reach the dunders a change touches."""

from __future__ import annotations

import datetime
import decimal
import fractions

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.worker import literals
from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.resolve import Resolver

DURATION = '''\
import datetime


class Duration:
    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.seconds == self.seconds

    def __rsub__(self, other: datetime.timedelta) -> datetime.timedelta:
        if not isinstance(other, datetime.timedelta):
            return NotImplemented
        return other - datetime.timedelta(seconds=self.seconds)

    def __deepcopy__(self, memo: dict) -> "Duration":
        return Duration(self.seconds)
'''


def _run(builder: RepoBuilder, before: str, after: str, **options: object):
    make_pr(builder, {"durations/__init__.py": "", "durations/core.py": before},
            {"durations/core.py": after})
    return run_analyze(builder, max_sequences=400, **options)


def test_a_reflected_operator_with_a_standard_value(builder: RepoBuilder) -> None:
    broken = DURATION.replace("other - datetime.timedelta(seconds=self.seconds)",
                              "other + datetime.timedelta(seconds=self.seconds)")
    report = _run(builder, DURATION, broken)
    targets = {d.target for d in report.differences}
    assert "durations.core:Duration.__rsub__" in targets
    [difference] = [d for d in report.differences if d.target == "durations.core:Duration.__rsub__"]
    assert "datetime.timedelta(" in difference.test and " - " in difference.test


@pytest.mark.slow
def test_deepcopy_reaches_a_changed_deepcopy(builder: RepoBuilder) -> None:
    broken = DURATION.replace("return Duration(self.seconds)", "return Duration(0)")
    report = _run(builder, DURATION, broken)
    [difference] = [d for d in report.differences if d.target == "durations.core:Duration.__deepcopy__"]
    assert "copy.deepcopy(" in difference.test and "import copy" in difference.test


def test_hash_of_a_class_that_becomes_hashable(builder: RepoBuilder) -> None:
    hashable = DURATION.replace("    def __rsub__", "    def __hash__(self) -> int:\n"
                                "        return hash(self.seconds)\n\n    def __rsub__")
    report = _run(builder, DURATION, hashable)
    [difference] = [d for d in report.differences if d.target == "durations.core:Duration.__hash__"]
    assert "hash(" in difference.test
    assert difference.kind == "exception"  # unhashable on base


@pytest.mark.slow
def test_reversed_reaches_a_changed_reversed(builder: RepoBuilder) -> None:
    steps = ('class Steps:\n    def __init__(self, stop: int) -> None:\n        self.stop = stop\n\n'
             '    def __iter__(self):\n        return iter(range(self.stop))\n\n'
             '    def __reversed__(self):\n        return iter(range(self.stop - 1, -1, -1))\n')
    off_by_one = steps.replace("range(self.stop - 1, -1, -1)", "range(self.stop - 1, 0, -1)")
    report = _run(builder, steps, off_by_one)
    found = [d for d in report.differences if d.target == "durations.core:Steps.__reversed__"]
    assert ("return", "list of 1 items", "list of 0 items") in [(d.kind, d.base, d.head) for d in found]
    assert all("list(reversed(steps))" in d.test for d in found)  # called as user code does, drained


@pytest.mark.slow
def test_format_with_a_spec_of_an_int_subclass(builder: RepoBuilder) -> None:
    money = ('class Cents(int):\n    def __new__(cls, value: int) -> "Cents":\n'
             '        return super().__new__(cls, value)\n\n'
             '    def __format__(self, spec: str) -> str:\n'
             '        if "," in spec:\n            return format(int(self), spec)\n'
             '        return format(int(self), spec)\n')
    grouped = money.replace("format(int(self), spec)\n", "format(int(self), spec) + ' c'\n", 1)
    report = _run(builder, money, grouped)
    [difference] = [d for d in report.differences if d.target == "durations.core:Cents.__format__"]
    assert "format(" in difference.test


def test_protocols_off_by_their_switch(builder: RepoBuilder) -> None:
    broken = DURATION.replace("return Duration(self.seconds)", "return Duration(0)")
    from difforacle.generator.generation.techniques import Components

    report = _run(builder, DURATION, broken, components=Components.without(["protocols"]))
    assert not [d for d in report.differences if d.target == "durations.core:Duration.__deepcopy__"]


def test_the_catalog_lists_protocols_for_the_classes_that_define_them(tmp_path, monkeypatch) -> None:
    (tmp_path / "shapes.py").write_text(
        "class Bag:\n    def __len__(self):\n        return 0\n\n    def __contains__(self, item):\n"
        "        return False\n\n\nclass Plain:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    operations = {op["id"]: op for op in build_catalog(["shapes"])["operations"]}
    assert "copy:deepcopy" not in operations  # neither class customizes copying: no project code would run
    assert operations["builtins:len"]["params"][0]["hints"] == ["shapes.Bag"]
    assert operations["builtins:len"]["dispatches"] == ["shapes:Bag.__len__"]
    assert "operator:contains" in operations
    assert "builtins:hash" not in operations  # no class defines __eq__ or __hash__: identity only
    assert not [op for op in operations if op.startswith("operator:__")]  # no arithmetic defined


@pytest.mark.parametrize(("op_id", "args", "expected"), [
    ("operator:__sub__", [datetime.timedelta(1), "D"], "m:D.__rsub__"),
    ("operator:sub", ["D", 1], "m:D.__sub__"),
    ("builtins:hash", ["D"], "m:D.__hash__"),
    ("copy:deepcopy", ["P"], "copy:deepcopy"),  # object's own protocol: the operation itself
])
def test_the_callee_of_a_protocol_follows_dispatch(op_id: str, args: list, expected: str) -> None:
    class D:
        __module__, __qualname__ = "m", "D"

        def __sub__(self, other):
            return 0

        def __rsub__(self, other):
            return 0

        def __hash__(self):
            return 0

    class P:
        __module__, __qualname__ = "m", "P"

    operands = [D() if a == "D" else P() if a == "P" else a for a in args]
    assert Resolver().resolve(op_id).callee(operands) == expected


@pytest.mark.parametrize("value", [fractions.Fraction(-7, 3), decimal.Decimal("1.50"),
                                   decimal.Decimal("nan")])
def test_fraction_and_decimal_literals(value: object) -> None:
    literal = ["fraction", str(value)] if isinstance(value, fractions.Fraction) else ["decimal", str(value)]
    decoded = literals.decode(literal)
    assert type(decoded) is type(value) and str(decoded) == str(value)
    assert eval(literals.source(literal), {"fractions": fractions, "decimal": decimal}).__repr__() \
        == decoded.__repr__()
    assert literals.modules_used(literal) == {type(value).__module__}


def test_standard_values_are_observed_by_their_repr() -> None:
    from difforacle.generator.oracle.leaves import shape
    from difforacle.generator.worker.observe import primitive_leaf

    assert primitive_leaf(datetime.timedelta(days=1)) == ["v", "datetime.timedelta",
                                                          "datetime.timedelta(days=1)"]
    assert primitive_leaf(decimal.Decimal("1.50")) == ["v", "decimal.Decimal", "Decimal('1.50')"]
    assert shape(primitive_leaf(datetime.date(2024, 2, 29))) != shape(primitive_leaf(decimal.Decimal(1)))


SPANS = '''\
class _Span:
    """A private class: its instances come from `Ranges.add`."""

    def __init__(self, low, high):
        self.low, self.high = low, high

    def __lt__(self, other):
        if not isinstance(other, _Span):
            return NotImplemented
        return self.high < other.low


class Ranges:
    def __init__(self):
        self.spans = []

    def add(self, low: int, high: int):
        span = _Span(low, high)
        self.spans.append(span)
        return span
'''


@pytest.mark.slow
def test_a_private_classs_changed_comparison(builder: RepoBuilder) -> None:
    """`add()` returns a private `_Span`; comparing two of them is the module's behaviour too."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/spans.py": SPANS},
            {"pkg/spans.py": SPANS.replace("self.high < other.low", "self.high <= other.low")})
    differences = run_analyze(builder, max_sequences=400).differences
    assert [d for d in differences if d.target == "pkg.spans:_Span.__lt__"], [d.target for d in differences]


def test_private_classes_get_protocols_but_no_operations(tmp_path, monkeypatch) -> None:
    (tmp_path / "spans.py").write_text(SPANS)
    monkeypatch.syspath_prepend(str(tmp_path))
    catalog = build_catalog(["spans"])
    ids = {op["id"] for op in catalog["operations"]}
    assert "spans._Span" in catalog["classes"]
    assert not any(op_id.startswith("spans:_Span") for op_id in ids)  # no constructor or methods
    [less] = [op for op in catalog["operations"] if op["id"] == "operator:lt"]
    assert less["params"][0]["hints"] == ["spans._Span"]
