"""Tests for `difforacle.generator.findings.render`: each flavour of rendered test passes on its
side and fails on the other.

Observations come from the worker's own SequenceRunner run in this process against a small module
written to a temporary folder ("base"), then against an edited copy ("head"); the difference (found
by `difforacle.generator.oracle.compare`, or read at a given key) is rendered in both flavours:
`pin="base"` must pass on base and fail on head, `pin="head"` the reverse. The rendered source is
executed in process against both modules, and once more under pytest.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path

import black
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from difforacle.generator.findings import render
from difforacle.generator.findings.render import can_pin, render_test
from difforacle.generator.oracle.checks import Unpinnable
from difforacle.generator.oracle.compare import Mismatch, first_mismatch
from difforacle.generator.runtime.catalog import Catalog, Operation
from difforacle.generator.worker import literals
from difforacle.generator.worker.execute import SequenceRunner
from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.observe import Observer
from difforacle.generator.worker.protocol import SequenceResult
from difforacle.generator.worker.resolve import Resolver
from difforacle.generator.worker.tracer import ChangeTracer

MODULE = "dor_render_target"
PINS = ("base", "head")

BASE = textwrap.dedent('''
    import enum


    class ParseError(ValueError):
        pass


    def parse(text):
        if not text:
            raise ParseError("empty input: nothing to parse (need digits)")
        return int(text) * 2


    def greet(name):
        return "hello " + name


    def strict(x):
        if x < 0:
            raise ValueError("negative")
        return x


    def lenient(x):
        return abs(x)


    def check(x):
        raise ValueError("bad value")


    def ratio(a, b):
        return a / b


    def count(n):
        return n


    def flags(n):
        return n > 0


    def nothing(n):
        return None


    def raw(n):
        return b"ab" * n


    def limit():
        return float("inf")


    def huge(n):
        return 10 ** 30 + n


    def names():
        return {"a": 1, "b": 2}


    def tags():
        return {"x", "y"}


    def pair(n):
        return [n, n]


    def triple(n):
        return (n, n, n)


    def stream(n):
        return (i for i in range(n))


    def banner():
        return "=" * 500


    def polar():
        return 1 + 2j


    class Mode:
        class Kind(enum.Enum):
            FAST = 1
            SLOW = 2


    def mode():
        return Mode.Kind.FAST


    class Meter:
        def __init__(self, start=0):
            self.readings = [start]
            self.labels = {"k": start}

        def add(self, value):
            self.readings.append(value)
            return 0

        def spread(self):
            return {"a": min(self.readings), "z": max(self.readings)}

        @property
        def total(self):
            return sum(self.readings)

        def __len__(self):
            return len(self.readings)

        def __iter__(self):
            return iter(self.readings)

        def __contains__(self, value):
            return value in self.readings


    class Gauge:
        def __init__(self, level=0):
            self.level = level
            self.unit = "cm"

        @property
        def reading(self):
            return f"{self.level} cm"
''')

EDITS = [
    ("return int(text) * 2", "return int(text) * 3"),
    ('"empty input: nothing to parse (need digits)"', '"empty input"'),
    ('return "hello " + name', 'return "hi " + name'),
    ('raise ValueError("negative")', "return -x"),
    ("return abs(x)", 'raise ValueError("no negatives")'),
    ('raise ValueError("bad value")', 'raise ParseError("bad value")'),
    ("return a / b", "return a / b * 1.001"),
    ("def count(n):\n    return n\n", "def count(n):\n    return float(n)\n"),
    ("return n > 0", "return n >= 0"),
    ("def nothing(n):\n    return None", "def nothing(n):\n    return n"),
    ('return b"ab" * n', 'return b"ba" * n'),
    ('return float("inf")', 'return 1e308'),
    ("return 10 ** 30 + n", "return 10 ** 30 + n + 1"),
    ('return {"a": 1, "b": 2}', 'return {"a": 1, "c": 2}'),
    ('return {"x", "y"}', 'return {"x", "z"}'),
    ("return [n, n]", "return [n, n, n]"),
    ("return (n, n, n)", "return (n, n)"),
    ("return (i for i in range(n))", "return (i for i in range(n - 1))"),
    ('return "=" * 500', 'return "-" * 500'),
    ("return 1 + 2j", "return 1 + 3j"),
    ("return Mode.Kind.FAST", "return Mode.Kind.SLOW"),
    ("self.readings.append(value)", "self.readings.append(value * 2)"),
    ('"a": min(self.readings)', '"a": min(self.readings) - 1'),
    ('self.labels = {"k": start}', 'self.labels = {"k": start + 1}'),
    ("return len(self.readings)", "return len(self.readings) + 1"),
    ('self.unit = "cm"', 'self.note = "calibrated"'),
    ('return f"{self.level} cm"', 'raise RuntimeError("gauge is broken")'),
]


def _head_source() -> str:
    source = BASE
    for old, new in EDITS:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


HEAD = _head_source()


def lit(tag: str, value: object = None) -> dict:
    return {"lit": [tag] if tag == "none" else [tag, value]}


def call(name: str, *args: dict) -> dict:
    return {"op": f"{MODULE}:{name}", "args": list(args), "kwargs": {}}


@dataclass(frozen=True)
class Case:
    name: str
    statements: list[dict]
    key: str | None = None  # the key to render; None: the first mismatch
    expect: dict[str, str] = field(default_factory=dict)  # pin -> text the rendered source contains


METER = [call("Meter", lit("int", 1)), call("Meter.add", {"ref": 0}, lit("int", 2))]
GAUGE = [call("Gauge", lit("int", 1))]
HUGE_BASE, HUGE_HEAD = hash(10**30 + 1), hash(10**30 + 2)

# Differences of every leaf kind; each flavour must pass on its side and fail on the other.
CASES = [
    Case("return_int", [call("parse", lit("str", "4"))], None,
         {"base": 'assert result == 8, "head: 12"', "head": 'assert result == 12, "base: 8"'}),
    Case("return_str", [call("greet", lit("str", "bo"))], None,
         {"base": 'assert result == "hello bo", "head: \'hi bo\'"',
          "head": 'assert result == "hi bo", "base: \'hello bo\'"'}),
    Case("return_float", [call("ratio", lit("int", 1), lit("int", 3))], None,
         {"base": "0.3333333333333333, rel=1e-09, abs=1e-12",
          "head": "0.3336666666666666, rel=1e-09, abs=1e-12"}),
    Case("return_int_becomes_float", [call("count", lit("int", 2))], None,
         {"base": "assert type(result) is int and result == 2,",
          "head": "assert type(result) is float and result == pytest.approx(2.0, rel=1e-09, abs=1e-12)"}),
    Case("return_none", [call("nothing", lit("int", 5))], None,
         {"base": 'assert result is None, "head: 5"', "head": 'assert result == 5, "base: None"'}),
    Case("return_bool", [call("flags", lit("int", 0))], None,
         {"base": "assert result is False,", "head": "assert result is True,"}),
    Case("return_bytes", [call("raw", lit("int", 2))], None,
         {"base": 'assert result == b"abab",', "head": 'assert result == b"baba",'}),
    Case("return_infinite_float", [call("limit")], None,
         {"base": 'assert result == float("inf"),', "head": "pytest.approx(1e308, rel=1e-09, abs=1e-12)"}),
    Case("return_huge_int", [call("huge", lit("int", 1))], None,
         {"base": f"result.bit_length() == 100 and hash(result) == {HUGE_BASE}",
          "head": f"result.bit_length() == 100 and hash(result) == {HUGE_HEAD}"}),
    Case("return_dict", [call("names")], None,
         {"base": 'assert list(result) == ["a", "b"],', "head": 'assert list(result) == ["a", "c"],'}),
    Case("return_set", [call("tags")], None,
         {"base": 'assert result == {"x", "y"},', "head": 'assert result == {"x", "z"},'}),
    Case("return_list", [call("pair", lit("int", 7))], None,
         {"base": "assert len(result) == 2,", "head": "assert len(result) == 3,"}),
    Case("return_tuple", [call("triple", lit("int", 7))], None,
         {"base": "assert len(result) == 3,", "head": "assert len(result) == 2,"}),
    Case("return_generator", [call("stream", lit("int", 3))], None,
         {"base": "assert len(list(result)) == 3,", "head": "assert len(list(result)) == 2,"}),
    Case("return_long_text", [call("banner")], None,
         {"base": '"f88bcda856ad6bbb"', "head": '"cbc297cb6d2cb87a"'}),
    Case("return_complex", [call("polar")], None,
         {"base": "assert result == (1 + 2j),", "head": "assert result == (1 + 3j),"}),
    Case("return_enum", [call("mode")], None,
         {"base": 'assert result.name == "FAST",', "head": 'assert result.name == "SLOW",'}),
    Case("exception_message", [call("parse", lit("str", ""))], None,
         {"base": 'pytest.raises(ParseError, match=r"^empty input: nothing to parse \\(need digits\\)$")',
          "head": 'pytest.raises(ParseError, match=r"^empty input$")'}),
    Case("exception_only_on_base", [call("strict", lit("int", -1))], None,
         {"base": '# head: returns normally\n    with pytest.raises(ValueError, match=r"^negative$"):\n'
                  "        strict(-1)\n",
          "head": "    # base: raises ValueError: negative\n    strict(-1)\n"}),
    Case("exception_only_on_head", [call("lenient", lit("int", -1))], None,
         {"base": "    # head: raises ValueError: no negatives\n    lenient(-1)\n",
          "head": '    with pytest.raises(ValueError, match=r"^no negatives$"):\n        lenient(-1)\n'}),
    Case("exception_subclass_same_message", [call("check", lit("int", 1))], None,
         {"base": 'with pytest.raises(ValueError, match=r"^bad value$") as excinfo:\n        check(1)\n'
                  "    assert type(excinfo.value) is ValueError\n",
          "head": 'with pytest.raises(ParseError, match=r"^bad value$")'}),
    Case("property_on_receiver", METER, "1/0:total",
         {"base": "    meter = Meter(1)\n    meter.add(2)\n    assert meter.total == 3, \"head: 5\"\n",
          "head": "    meter = Meter(1)\n    meter.add(2)\n    assert meter.total == 5, \"base: 3\"\n"}),
    # a volume call: the worker's 129 calls, each with a distinct literal, written as the test's list
    Case("volume_call_on_receiver",
         [call("Meter", lit("int", 1)), call("Meter.add<x129>", {"ref": 0}, lit("int", 2))], "1/0:total",
         {"base": "    [meter.add(2 + i) for i in range(129)][-1]\n"
                  "    assert meter.total == 8515, \"head: 17029\"\n",
          "head": "    [meter.add(2 + i) for i in range(129)][-1]\n    assert meter.total == 17029,"}),
    Case("list_index_on_receiver", METER, "1/0.readings[1]",
         {"base": 'assert meter.readings[1] == 2, "head: 4"',
          "head": 'assert meter.readings[1] == 4, "base: 2"'}),
    Case("dict_index_on_constructed_value", [call("Meter", lit("int", 1))], "0/0.labels['k']",
         {"base": 'assert meter.labels["k"] == 1, "head: 2"',
          "head": 'assert meter.labels["k"] == 2, "base: 1"'}),
    Case("len_of_receiver", METER, "1/0@len",
         {"base": 'assert len(meter) == 2, "head: 3"', "head": 'assert len(meter) == 3, "base: 2"'}),
    Case("item_of_method_result", [call("Meter", lit("int", 1)), call("Meter.spread", {"ref": 0})],
         "1/1['a']",
         {"base": '    spread = meter.spread()\n    assert spread["a"] == 1, "head: 0"\n',
          "head": '    spread = meter.spread()\n    assert spread["a"] == 0, "base: 1"\n'}),
    Case("observer_call_item", [call("Meter", lit("int", 1))], "0/0.spread()['a']",
         {"base": 'assert meter.spread()["a"] == 1, "head: 0"',
          "head": 'assert meter.spread()["a"] == 0, "base: 1"'}),
    Case("observer_raises_on_head", GAUGE, "0/0:reading",
         {"base": 'assert gauge.reading == "1 cm", "head: raises RuntimeError: gauge is broken"',
          "head": '    # base: \'1 cm\'\n    with pytest.raises(RuntimeError, match=r"^gauge is broken$"):\n'
                  "        gauge.reading\n"}),
    Case("attribute_only_on_base", GAUGE, "0/0.unit",
         {"base": 'assert hasattr(gauge, "unit") and gauge.unit == "cm", "head: (not present)"',
          "head": 'assert not hasattr(gauge, "unit"), "base: \'cm\'"'}),
    Case("attribute_only_on_head", GAUGE, "0/0.note",
         {"base": 'assert not hasattr(gauge, "note"), "head: \'calibrated\'"',
          "head": 'assert hasattr(gauge, "note") and gauge.note == "calibrated", "base: (not present)"'}),
]


# ---------------------------------------------------------------- helpers


def _write(folder: Path, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{MODULE}.py").write_text(source)


class _Imported:
    """MODULE imported from `folder` for the duration of a with-block (no bytecode, no leftovers)."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)

    def __enter__(self) -> None:
        self._dont_write = sys.dont_write_bytecode
        sys.dont_write_bytecode = True
        sys.modules.pop(MODULE, None)
        sys.path.insert(0, self.folder)
        importlib.invalidate_caches()

    def __exit__(self, *exc: object) -> None:
        sys.path.remove(self.folder)
        sys.modules.pop(MODULE, None)
        sys.dont_write_bytecode = self._dont_write


def _observe(folder: Path, statements: list[dict]) -> SequenceResult:
    previous = signal.getsignal(signal.SIGALRM)
    try:
        with _Imported(folder):
            runner = SequenceRunner(Resolver(), Observer(), ChangeTracer(), 2.0, 0)
            return SequenceResult.from_json(runner.run(statements))
    finally:
        signal.signal(signal.SIGALRM, previous)


def _operations(folder: Path) -> dict[str, Operation]:
    with _Imported(folder):
        catalog = Catalog.from_json(build_catalog([MODULE]))
    assert not catalog.import_errors
    return {op.id: op for op in catalog.operations}


@dataclass
class Rendered:
    case: Case
    mismatch: Mismatch
    pin: str
    source: str


def _mismatch(case: Case, base: Path, head: Path) -> Mismatch:
    base_run, head_run = _observe(base, case.statements), _observe(head, case.statements)
    if case.key is None:
        mismatch = first_mismatch(base_run, head_run, set())
        assert mismatch is not None, (base_run.observations, head_run.observations)
    else:
        base_leaf, head_leaf = base_run.observations.get(case.key), head_run.observations.get(case.key)
        mismatch = Mismatch(case.key, base_leaf, head_leaf)
        assert mismatch.base != mismatch.head, mismatch
    return mismatch


def _render(case: Case, base: Path, head: Path, test_name: str, pin: str = "base") -> Rendered:
    mismatch = _mismatch(case, base, head)
    assert can_pin(mismatch, pin), mismatch
    source = render_test(case.statements, _operations(base), mismatch, test_name, pin=pin)
    return Rendered(case, mismatch, pin, source)


def _run_in_process(rendered: Rendered, folder: Path, test_name: str) -> None:
    code = compile(rendered.source, f"<rendered {rendered.case.name}>", "exec")
    with _Imported(folder):
        namespace: dict = {"__name__": "rendered_test"}
        exec(code, namespace)
        namespace[test_name]()


def _match(source: str) -> str:
    """The `match=` pattern of the rendered pytest.raises call."""
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and ast.unparse(n.func) == "pytest.raises"]
    [keyword] = [k for c in calls for k in c.keywords if k.arg == "match"]
    return ast.literal_eval(keyword.value)


def _message(source: str) -> str:
    """The message of the rendered test's assertion."""
    [assertion] = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert)]
    return ast.literal_eval(assertion.msg)


def _assert_one_test(source: str, test_name: str) -> ast.FunctionDef:
    """Valid Python that pytest collects: imports, then one test function ending in one behaviour."""
    tree = ast.parse(source)
    *imports, function = tree.body
    assert all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in imports), source
    assert isinstance(function, ast.FunctionDef) and function.name == test_name, source
    assert not function.args.args and not function.decorator_list
    checks = [n for n in function.body if isinstance(n, (ast.Assert, ast.With))]
    if len(checks) == 2:  # `with pytest.raises(...) as excinfo:` and the exact type of excinfo.value
        assert isinstance(checks[0], ast.With) and "excinfo.value" in ast.unparse(checks[1]), source
        checks = checks[:1]
    assert len(checks) <= 1, source
    assert checks == [] or function.body[-1] is checks[0] or (
        len(function.body) > 1 and isinstance(function.body[-2], ast.With)), source
    if isinstance(function.body[-1], ast.With):
        assert ast.unparse(function.body[-1].items[0].context_expr).startswith("pytest.raises("), source
    return function


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("render")
    _write(root / "base", BASE)
    _write(root / "head", HEAD)
    return root / "base", root / "head"


def _check_contract(case: Case, sides: tuple[Path, Path], pin: str) -> Rendered:
    """The rendered test passes on the pinned side; on the other it fails (an assertion, or the
    other side's own exception where the pinned side returned normally)."""
    passing, failing = sides if pin == "base" else sides[::-1]
    rendered = _render(case, *sides, "test_difference", pin)
    _assert_one_test(rendered.source, "test_difference")
    try:
        _run_in_process(rendered, passing, "test_difference")
    except BaseException as exc:
        pytest.fail(f"pin={pin} test fails on {pin} with {exc!r}; mismatch {rendered.mismatch}:\n"
                    f"{rendered.source}")
    try:
        _run_in_process(rendered, failing, "test_difference")
    except (AssertionError, pytest.fail.Exception):
        return rendered
    except Exception as exc:
        other = rendered.mismatch.head if pin == "base" else rendered.mismatch.base
        if other is not None and other[:2] == ["E", type(exc).__qualname__]:
            return rendered  # the other side raises where the pinned side did not (or raised another)
        pytest.fail(f"pin={pin} test fails on the other side with {exc!r}, not an assertion:\n"
                    f"{rendered.source}")
    except BaseException as exc:
        pytest.fail(f"pin={pin} test fails on the other side with {exc!r}:\n{rendered.source}")
    pytest.fail(f"pin={pin} test passes on both sides; mismatch {rendered.mismatch}:\n{rendered.source}")


# ---------------------------------------------------------------- the contract, in process


@pytest.mark.parametrize("pin", PINS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rendered_test_passes_on_its_side_and_fails_on_the_other(
        case: Case, pin: str, sides: tuple[Path, Path]) -> None:
    rendered = _check_contract(case, sides, pin)
    assert case.expect[pin] in rendered.source, rendered.source


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rendered_source_is_black_formatted(case: Case, sides: tuple[Path, Path]) -> None:
    source = _render(case, *sides, "test_difference").source
    assert black.format_str(source, mode=black.Mode(line_length=100)) == source
    compile(source, "rendered.py", "exec")


# ---------------------------------------------------------------- what the source says


def _source(case_name: str, sides: tuple[Path, Path], pin: str = "base") -> str:
    case = next(c for c in CASES if c.name == case_name)
    return _render(case, *sides, "test_difference", pin).source


def test_return_value_source(sides: tuple[Path, Path]) -> None:
    assert _source("return_int", sides) == (
        f"from {MODULE} import parse\n\n\n"
        "def test_difference():\n"
        '    result = parse("4")\n'
        '    assert result == 8, "head: 12"\n'
    )
    assert _source("return_int", sides, "head") == (
        f"from {MODULE} import parse\n\n\n"
        "def test_difference():\n"
        '    result = parse("4")\n'
        '    assert result == 12, "base: 8"\n'
    )


def test_exception_source_uses_pytest_raises_with_match(sides: tuple[Path, Path]) -> None:
    source = _source("exception_message", sides)
    assert source.startswith(f"import pytest\n\nfrom {MODULE} import ParseError, parse\n\n\n"), source
    match = re.search(r"    # head: raises ParseError: empty input\n"
                      r"    with pytest\.raises\(ParseError, match=(.+)\):\n        parse\(\"\"\)\n$", source)
    assert match, source
    pattern = eval(match.group(1))
    assert re.search(pattern, "empty input: nothing to parse (need digits)")
    assert not re.search(pattern, "empty input")
    assert not re.search(pattern, "empty input: nothing to parse (need digits)!")


def test_imports_are_grouped_stdlib_pytest_project() -> None:
    op = Operation(f"{MODULE}:f", "function", None, (), (), None, None)
    statement = {"op": op.id, "args": [{"lit": ["counter", 1]}], "kwargs": {}}
    source = render_test([statement], {op.id: op}, Mismatch("0/0", ["f", "nan"], ["f", "0.5"]), "test_g")
    assert source.startswith(f"import itertools\nimport math\n\nfrom {MODULE} import f\n\n\n"), source
    source = render_test([statement], {op.id: op}, Mismatch("0/0", ["f", "0.5"], ["f", "nan"]), "test_g")
    assert source.startswith(f"import itertools\n\nimport pytest\n\nfrom {MODULE} import f\n\n\n"), source


def test_statements_after_the_difference_are_dropped() -> None:
    operations = {f"{MODULE}:parse": Operation(f"{MODULE}:parse", "function", None, (), (), None, None)}
    statements = [call("parse", lit("str", text)) for text in ("1", "2", "3")]
    expectations = (("base", 'assert result == 4, "head: 6"'), ("head", 'assert result == 6, "base: 4"'))
    for pin, expected in expectations:
        source = render_test(statements, operations, Mismatch("1/1", ["i", 4], ["i", 6]), "test_cut", pin=pin)
        assert 'parse("3")' not in source
        assert f'    parse("1")\n    result = parse("2")\n    {expected}\n' in source
        compile(source, "cut.py", "exec")


def test_literals_and_kwargs_are_rendered() -> None:
    op = Operation(f"{MODULE}:f", "function", None, (), (), None, None)
    statement = {"op": op.id, "args": [lit("float", "nan"), {"lit": ["tuple", [["int", 1]]]},
                                       {"lit": ["set", []]}], "kwargs": {"key": lit("bytes", "00")}}
    source = render_test([statement], {op.id: op}, Mismatch("0/0", ["i", 1], ["i", 2]), "test_lits")
    assert 'result = f(float("nan"), (1,), set(), key=b"\\x00")' in source
    compile(source, "lits.py", "exec")


def test_operator_methods_render_as_operators() -> None:
    ctor = Operation(f"{MODULE}:Meter", "constructor", f"{MODULE}.Meter", (), (), None, None)
    ops = {ctor.id: ctor}
    for name in ("__lt__", "__getitem__", "__len__", "__contains__", "__setitem__"):
        op_id = f"{MODULE}:Meter.{name}"
        ops[op_id] = Operation(op_id, "method", ctor.owner, (), (), None, None)
    statements = [call("Meter"), call("Meter"), call("Meter.__lt__", {"ref": 0}, {"ref": 1}),
                  call("Meter.__getitem__", {"ref": 0}, lit("int", 0)), call("Meter.__len__", {"ref": 1}),
                  call("Meter.__setitem__", {"ref": 0}, lit("int", 1), lit("int", 2)),
                  call("Meter.__contains__", {"ref": 0}, lit("int", 3))]
    source = render_test(statements, ops, Mismatch("6/6", ["t", True], ["t", False]), "test_ops")
    assert "    meter < meter_2\n" in source
    assert "    meter[0]\n" in source
    assert "    len(meter_2)\n" in source
    assert "    meter[1] = 2\n" in source
    assert '    contains = 3 in meter\n    assert contains is True, "head: False"\n' in source
    compile(source, "ops.py", "exec")
    # an item assignment whose own result differs: called explicitly, so that it has a value
    source = render_test(statements[:6], ops, Mismatch("5/5", ["n"], ["i", 1]), "test_set")
    assert "    result = meter.__setitem__(1, 2)\n    assert result is None," in source


def test_a_setter_renders_as_the_assignment_a_user_writes() -> None:
    ctor = Operation(f"{MODULE}:Banner", "constructor", f"{MODULE}.Banner", (), (), None, None)
    setter = Operation(f"{MODULE}:Banner.width<set>", "method", ctor.owner, (), (), None, None)
    render = Operation(f"{MODULE}:Banner.render", "method", ctor.owner, (), (), None, None)
    ops = {op.id: op for op in (ctor, setter, render)}
    statements = [call("Banner"), call("Banner.width<set>", {"ref": 0}, lit("int", 40)),
                  call("Banner.render", {"ref": 0})]
    source = render_test(statements, ops, Mismatch("2/2", ["s", "a"], ["s", "b"]), "test_width")
    assert "    banner = Banner()\n    banner.width = 40\n    result = banner.render()\n" in source
    compile(source, "width.py", "exec")
    # the assignment's own result (None) is what differs: it needs a value, so it is called
    source = render_test(statements[:2], ops, Mismatch("1/1", ["n"], ["i", 1]), "test_set")
    assert "    result = setattr(banner, 'width', 40)\n    assert result is None," in source.replace('"', "'")


def test_variables_are_named_after_types_and_roles_and_never_shadow_imports() -> None:
    def operation(qualname: str, kind: str, returns: tuple[str, ...] = ()) -> Operation:
        owner = f"{MODULE}.{qualname.split('.')[0]}" if kind != "function" else None
        return Operation(f"{MODULE}:{qualname}", kind, owner, (), returns, None, None)

    ops = {o.id: o for o in (
        operation("LRUCache", "constructor"), operation("LRUCache.get", "method"),
        operation("Version.parse", "static"), operation("parse_version", "function"),
        operation("version", "function"), operation("make_cache", "function"),
        operation("pytest_config", "function", (f"{MODULE}.Pytest",)))}
    statements = [call("LRUCache", lit("int", 2)), call("LRUCache.get", {"ref": 0}, lit("str", "k")),
                  call("Version.parse", lit("str", "1.0")), call("parse_version", lit("str", "2.0")),
                  call("make_cache"), call("pytest_config"),
                  call("version", {"ref": 1}, {"ref": 2}, {"ref": 3}, {"ref": 4}, {"ref": 5})]
    source = render_test(statements, ops, Mismatch("6/6", ["i", 1], ["i", 2]), "test_names")
    assert "    lru_cache = LRUCache(2)\n" in source
    assert '    value = lru_cache.get("k")\n' in source
    assert '    version_2 = Version.parse("1.0")\n' in source  # `version` is an imported function
    assert '    version_3 = parse_version("2.0")\n' in source
    assert "    cache = make_cache()\n" in source
    assert "    pytest_2 = pytest_config()\n" in source  # after its class, `Pytest`; but `pytest` is taken
    assert "    result = version(value, version_2, version_3, cache, " in source
    assert "var_" not in source
    function = _assert_one_test(source, "test_names")
    assigned = {t.id for n in function.body if isinstance(n, ast.Assign) for t in n.targets}
    imported = {a.asname or a.name for n in ast.parse(source).body if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert not assigned & imported, (assigned, imported)


def test_project_names_that_shadow_builtins_or_helpers_are_imported_qualified() -> None:
    ops = {o.id: o for o in (Operation(f"{MODULE}:len", "function", None, (), (), None, None),
                             Operation(f"{MODULE}:math", "function", None, (), (), None, None))}
    mismatch = Mismatch("1/1", ["f", "nan"], ["f", "1.0"])
    source = render_test([call("len", lit("int", 1)), call("math")], ops, mismatch, "test_len")
    assert f"import math\n\nimport {MODULE}\n\n\n" in source
    assert f"    {MODULE}.len(1)\n    result = {MODULE}.math()\n    assert math.isnan(result)," in source
    compile(source, "len.py", "exec")


def test_test_name_helper_is_exported_for_the_engine(sides: tuple[Path, Path]) -> None:
    name = render.test_name(f"{MODULE}:Meter.add", "observer", "head")
    assert name == "test_meter_add_observer_matches_head"
    case = next(c for c in CASES if c.name == "property_on_receiver")
    source = _render(case, *sides, name, "head").source
    _assert_one_test(source, name)


def test_render_rejects_an_unknown_pin() -> None:
    op = Operation(f"{MODULE}:f", "function", None, (), (), None, None)
    with pytest.raises(ValueError, match="pin"):
        render_test([call("f")], {op.id: op}, Mismatch("0/0", ["i", 1], ["i", 2]), "test_f",
                    pin="both")  # type: ignore[arg-type]


# ---------------------------------------------------------------- what cannot be pinned

F = {f"{MODULE}:f": Operation(f"{MODULE}:f", "function", None, (), (), None, None)}
G = {"op": f"{MODULE}:f", "args": [lit("int", 1)], "kwargs": {}}


@pytest.mark.parametrize("lost", [
    ["E", "Timeout", "statement exceeded 1s"], ["E", "Hang", "hang"], ["E", "Crash", "killed by SIGSEGV"]])
def test_a_call_that_never_ends_cannot_be_pinned_on_its_side(lost: list) -> None:
    mismatch = Mismatch("0/!", lost, None)
    assert not can_pin(mismatch, "base") and can_pin(mismatch, "head")
    with pytest.raises(Unpinnable):
        render_test([G], F, mismatch, "test_f", pin="base")
    assert issubclass(Unpinnable, ValueError)
    source = render_test([G], F, mismatch, "test_f", pin="head")
    verb = "crashes" if lost[1] == "Crash" else "hangs"
    assert source.endswith(f"    # base: {verb} ({lost[2]})\n    f(1)\n"), source
    # the other way round: the base flavour asserts base's value, the comment says head hangs
    mismatch = Mismatch("0/0", ["i", 1], None)
    assert can_pin(Mismatch("0/!", None, lost), "base") and not can_pin(Mismatch("0/!", None, lost), "head")
    assert can_pin(mismatch, "base")


def test_a_project_exception_named_timeout_can_be_pinned() -> None:
    mismatch = Mismatch("0/!", ["E", "Timeout", "too slow", "pkg.errors"], None)
    assert can_pin(mismatch, "base")
    source = render_test([G], F, mismatch, "test_f")
    assert "from pkg.errors import Timeout\n" in source
    assert 'with pytest.raises(Timeout, match=r"^too slow$"):\n        f(1)\n' in source


@pytest.mark.parametrize(("key", "base", "head"), [
    ("0/0", ["unstable"], ["i", 1]),  # an observer that varied: nothing to assert
    ("0/0", ["cycle"], ["T", "m.Node"]),
    ("0/0", ["dict", 2, ["m.Key", "m.Key"]], ["dict", 2, ["m.Key", "m.Other"]]),  # len() on both sides
    ("0/0@str", ["s~", 403, "abcdef0123456789", "x"], ["s", "short"]),  # str() cut short, then digested
    ("0/0@len", None, ["i", 2]),  # no __len__ observed on base: not something hasattr can say
    ("0/0['k']", None, ["i", 2]),
    ("0/0", ["c", "(nan+1j)"], ["c", "1j"]),
    ("0/!", ["E", "ValueError", "same", "builtins"], ["E", "ValueError", "same", "builtins"]),
    ("0/!", ["E", "Error", "x", "pkg.<locals>"], None),
    ("0/!", ["E", "make.<locals>.Error", "x", "pkg"], None),
    ("0/!", ["API", "missing", "no attribute f"], None),  # the import itself would fail
])
def test_unpinnable_leaves(key: str, base: list | None, head: list | None) -> None:
    mismatch = Mismatch(key, base, head)
    assert not can_pin(mismatch, "base")
    with pytest.raises(Unpinnable):
        render_test([G], F, mismatch, "test_f", pin="base")


def test_a_changed_signature_is_pinned_as_a_type_error() -> None:
    mismatch = Mismatch("0/!", None, ["API", "signature", "unexpected keyword argument 'x'"])
    assert can_pin(mismatch, "head")
    source = render_test([G], F, mismatch, "test_f", pin="head")
    assert "    with pytest.raises(TypeError):\n        f(1)\n" in source
    assert source.endswith("    # base: returns normally\n    with pytest.raises(TypeError):\n        f(1)\n")


# ---------------------------------------------------------------- messages, text, notes


def test_masked_addresses_and_cut_messages_become_patterns() -> None:
    message = "cannot use <Node object at 0x?> here"
    source = render_test([G], F, Mismatch("0/!", ["E", "TypeError", message, "builtins"], None), "test_f")
    pattern = _match(source)
    assert re.search(pattern, "cannot use <Node object at 0x7f3a2b1c9d80> here")
    assert not re.search(pattern, "cannot use <Node object at 0x7f3a2b1c9d80> there")
    long = "x" * 300 + "..."  # observe.clean_text cut it at 300 characters
    source = render_test([G], F, Mismatch("0/!", ["E", "ValueError", long, "builtins"], None), "test_f")
    pattern = _match(source)
    assert re.search(pattern, "x" * 350) and not re.search(pattern, "x" * 299)


def test_awkward_messages_stay_valid_source() -> None:
    message = 'line one\nline "two" \\ 0x? (end)'
    mismatch = Mismatch("0/!", ["E", "ValueError", message, "builtins"],
                        ["E", "KeyError", "'\n'", "builtins"])
    for pin in PINS:
        source = render_test([G], F, mismatch, "test_f", pin=pin)
        _assert_one_test(source, "test_f")
    pattern = _match(render_test([G], F, mismatch, "test_f"))
    assert re.search(pattern, 'line one\nline "two" \\ 0xdeadbeef (end)')


def test_str_observer_with_an_address_is_matched_as_a_pattern() -> None:
    node = Operation(f"{MODULE}:Node", "constructor", f"{MODULE}.Node", (), (), None, None)
    ops = {**F, node.id: node}
    mismatch = Mismatch("0/0@repr", ["s", "<Node 0x? a>"], ["s", "<Node 0x? b>"])
    source = render_test([call("Node")], ops, mismatch, "test_repr")
    assert "import re\n" in source
    assert 're.fullmatch(r"<Node 0x[0-9a-fA-F]{4,} a>", repr(node)) is not None' in source


def test_list_and_generator_observers_cut_at_twenty_items() -> None:
    mismatch = Mismatch("0/0@list", ["list", 20], ["list", 3])
    ops = {f"{MODULE}:Bag": Operation(f"{MODULE}:Bag", "constructor", f"{MODULE}.Bag", (), (), None, None)}
    assert "assert len(list(iter(bag))) >= 20," in render_test([call("Bag")], ops, mismatch, "test_bag")
    head_test = render_test([call("Bag")], ops, mismatch, "test_bag", pin="head")
    assert "assert len(list(iter(bag))) == 3," in head_test


def test_type_changes_are_guarded() -> None:
    cases = [
        (["i", 1], ["t", True], "assert type(result) is int and result == 1,"),
        (["f", "1.0"], ["i", 1], "assert type(result) is float and result == pytest.approx(1.0,"),
        (["list", 2], ["tuple", 2], "assert type(result) is list and len(result) == 2,"),
        (["tuple", 2], ["s", "ab"], "assert type(result) is tuple and len(result) == 2,"),
        (["pkg.Row", 2], ["tuple", 2],
         'type(result).__module__ + "." + type(result).__qualname__ == "pkg.Row" and len(result) == 2'),
        (["T", "pkg.a.Node"], ["T", "pkg.b.Node"], 'type(result).__qualname__ == "pkg.a.Node"'),
        (["T", "pkg.a.Node"], ["T", "pkg.a.Leaf"], 'assert type(result).__name__ == "Node",'),
        (["i", 1], ["i", 2], "assert result == 1,"),
        (["i", 1], ["n"], "assert result == 1,"),
        (["s", "1"], ["i", 1], 'assert result == "1",'),
    ]
    for base, head, expected in cases:
        source = render_test([G], F, Mismatch("0/0", base, head), "test_f")
        assert expected in source, source


def test_notes_are_one_short_printable_line() -> None:
    mismatch = Mismatch("0/0", ["i", 1], ["E", "ValueError", "a\nb\r\x00" + "c" * 500, "builtins"])
    source = render_test([G], F, mismatch, "test_f")
    message = _message(source)
    assert message.startswith("head: raises ValueError: a\\nb\\r\\x00ccc") and len(message) <= 200
    source = render_test([G], F, mismatch, "test_f", pin="head")
    comment = next(line for line in source.splitlines() if line.strip().startswith("#"))
    assert comment == "    # base: 1"


# ---------------------------------------------------------------- any sequence renders


LEAVES = st.one_of(
    st.none(),
    st.builds(lambda v: ["i", v], st.integers(-(2**62) + 1, 2**62 - 1)),
    st.builds(lambda v: ["s", v], st.text(max_size=40)),
    st.builds(lambda v: ["f", repr(v)], st.floats()),
    st.just(["n"]),
    st.builds(lambda v: ["t", v], st.booleans()),
    st.builds(lambda v: ["b", v.hex()], st.binary(max_size=10)),
    st.builds(lambda n, h: ["i~", n, h], st.integers(63, 500), st.integers()),
    st.builds(lambda t, m, mod: ["E", t, m, mod], st.sampled_from(["ValueError", "Err", "A.B"]),
              st.text(max_size=40), st.sampled_from(["builtins", "pkg.mod"])),
    st.builds(lambda t, m: ["E", t, m], st.sampled_from(["Timeout", "Hang", "Crash"]), st.text(max_size=10)),
    st.builds(lambda n, keys: ["dict", n, [["str", k] for k in keys]], st.integers(0, 3),
              st.lists(st.text(max_size=5), max_size=3)),
    st.builds(lambda keys: ["set", len(keys), [["int", k] for k in sorted(keys)]],
              st.sets(st.integers(), max_size=3)),
    st.builds(lambda tag, n: [tag, n], st.sampled_from(["list", "tuple", "gen", "pkg.Seq"]),
              st.integers(0, 25)),
    st.sampled_from([["unstable"], ["cycle"], ["T", "pkg.Node"], ["enum", "Color.RED"], ["fn", "pkg.f"],
                     ["c", "(1+2j)"], ["API", "missing", "gone"], ["API", "signature", "bad"]]),
)
LITERALS = st.one_of(
    st.builds(lambda v: ["int", v], st.integers()),
    st.builds(lambda v: ["str", v], st.text(max_size=20)),
    st.builds(lambda v: ["float", repr(v)], st.floats()),
    st.just(["none"]),
)
HYPO_OPS = {o.id: o for o in (
    Operation("pkg.mod:Widget", "constructor", "pkg.mod.Widget", (), (), None, None),
    Operation("pkg.mod:Widget.get", "method", "pkg.mod.Widget", (), (), None, None),
    Operation("pkg.mod:Widget.__getitem__", "method", "pkg.mod.Widget", (), (), None, None),
    Operation("pkg.mod:Widget.__setitem__", "method", "pkg.mod.Widget", (), (), None, None),
    Operation("pkg.mod:Widget.from_text", "static", "pkg.mod.Widget", (), (), None, None),
    Operation("pkg.mod:parse_widget", "function", None, (), ("pkg.mod.Widget",), None, None),
    Operation("pkg.mod:pytest", "function", None, (), (), None, None),
    Operation("other.mod:parse_widget", "function", None, (), (), None, None),
)}
SUFFIXES = ["", ".size", ":total", ".keys()", "['a']", "[0]", "@len", "@str", "@list", ".inner.size"]


@st.composite
def sequences(draw: st.DrawFn) -> tuple[list[dict], Mismatch]:
    length = draw(st.integers(1, 5))
    statements: list[dict] = []
    for index in range(length):
        receiver_ops = [o for o in HYPO_OPS if HYPO_OPS[o].kind == "method"] if index else []
        op_id = draw(st.sampled_from(sorted(HYPO_OPS)) if index else st.sampled_from(
            [o for o in sorted(HYPO_OPS) if o not in receiver_ops]))
        if HYPO_OPS[op_id].kind == "method" and not index:
            op_id = "pkg.mod:Widget"
        argument = st.one_of(st.builds(lambda lit: {"lit": lit}, LITERALS),
                             *([st.builds(lambda r: {"ref": r}, st.integers(0, index - 1))] if index else []))
        args = draw(st.lists(argument, max_size=3))
        if HYPO_OPS[op_id].kind == "method":
            args = [{"ref": draw(st.integers(0, index - 1))}, *args]
        kwargs = draw(st.dictionaries(st.sampled_from(["key", "size", "default"]), argument, max_size=2))
        statements.append({"op": op_id, "args": args, "kwargs": kwargs})
    last = length - 1
    var = draw(st.one_of(st.none(), st.integers(0, last)))
    key = f"{last}/!" if var is None else f"{last}/{var}{draw(st.sampled_from(SUFFIXES))}"
    return statements, Mismatch(key, draw(LEAVES), draw(LEAVES))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences(), st.sampled_from(PINS))
def test_any_sequence_renders_to_one_compilable_test_or_is_unpinnable(
        drawn: tuple[list[dict], Mismatch], pin: str) -> None:
    statements, mismatch = drawn
    if not can_pin(mismatch, pin):  # type: ignore[arg-type]
        with pytest.raises(Unpinnable):
            render_test(statements, HYPO_OPS, mismatch, "test_drawn", pin=pin)  # type: ignore[arg-type]
        return
    source = render_test(statements, HYPO_OPS, mismatch, "test_drawn", pin=pin)  # type: ignore[arg-type]
    compile(source, "drawn.py", "exec")
    function = _assert_one_test(source, "test_drawn")
    names = [t.id for n in function.body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)]
    assert len(names) == len(set(names)) and not any(n.startswith("var_") or n == "pytest" for n in names)


# ---------------------------------------------------------------- the contract, under pytest


@pytest.fixture(scope="module")
def pytest_suite(sides: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """All CASES rendered in both flavours into one test module, next to the base and to the head module."""
    base, head = sides
    sources = [_render(case, base, head, f"test_{case.name}_{pin}", pin).source
               for case in CASES for pin in PINS]
    imports = sorted({line for s in sources for line in s.splitlines()
                      if line.startswith(("import ", "from "))})
    bodies = [s[s.index("def test_"):] for s in sources]
    suite = "\n".join(imports) + "\n\n\n" + "\n\n".join(bodies)
    compile(suite, "test_rendered.py", "exec")
    root = tmp_path_factory.mktemp("pytest-suite")
    folders = []
    for side, source in (("base", BASE), ("head", HEAD)):
        folder = root / side
        _write(folder, source)
        (folder / "test_rendered.py").write_text(suite)
        (folder / "pytest.ini").write_text("[pytest]\n")
        folders.append(folder)
    return folders[0], folders[1]


def _pytest(folder: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "COV_CORE"))}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1", COLUMNS="1000")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", "test_rendered.py"]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize("side", PINS)
def test_rendered_suite_under_pytest(pytest_suite: tuple[Path, Path], side: str) -> None:
    """On each side, its own flavour passes and the other flavour fails, every one of them."""
    done = _pytest(pytest_suite[PINS.index(side)])
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{len(CASES)} failed, {len(CASES)} passed" in done.stdout, done.stdout
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAILED ")]
    other = "head" if side == "base" else "base"
    assert len(failures) == len(CASES) and all(f"_{other} " in line for line in failures), failures
    for line in failures:
        raised_there = re.search(r" - (ValueError: negative|ValueError: no negatives"
                                 r"|RuntimeError: gauge is broken|ValueError: bad value)$", line)
        assert raised_there or re.search(r" - (AssertionError|assert |Failed: DID NOT RAISE)", line), line


def test_a_path_argument_makes_the_test_write_its_file_in_a_fresh_working_directory() -> None:
    op = Operation(f"{MODULE}:f", "function", None, (), (), None, None)
    args = [{"lit": ["path", "a\nb"]}, {"lit": ["datetime", "2000-01-02T03:04:05"]}]
    statements = [{"op": op.id, "args": args, "kwargs": {"out": {"lit": ["list", [["textio", "x"]]]}}}]
    source = render_test(statements, {op.id: op}, Mismatch("0/0", ["i", 1], ["i", 2]), "test_g")
    name = literals.input_file_name("a\nb")
    assert source == (
        "import datetime\nimport io\nimport pathlib\n\n"
        f"from {MODULE} import f\n\n\n"
        "def test_g(monkeypatch, tmp_path):\n"
        "    monkeypatch.chdir(tmp_path)\n"
        f'    pathlib.Path("{name}").write_text("a\\nb", encoding="utf-8")\n'
        f'    result = f(\n        pathlib.Path("{name}"),\n'
        "        datetime.datetime(2000, 1, 2, 3, 4, 5),\n"
        '        out=[io.StringIO("x")],\n    )\n'
        '    assert result == 1, "head: 2"\n'), source


def test_a_variable_never_shadows_the_fixtures() -> None:
    op = Operation(f"{MODULE}:tmp_path", "function", None, (), (), None, None)
    statement = {"op": op.id, "args": [{"lit": ["path", ""]}], "kwargs": {}}
    source = render_test([statement], {op.id: op}, Mismatch("0/0", ["i", 1], ["i", 2]), "test_g")
    assert "def test_g(monkeypatch, tmp_path):" in source and "tmp_path = " not in source, source
    compile(source, "fixtures.py", "exec")


class _OddNames:
    """Names no attribute reference spells, as real libraries make them (setattr, `__dict__`)."""

    def __init__(self, value: int) -> None:
        setattr(self, " .encoding", value)
        self.__dict__["{0:3"] = value
        setattr(self, "class", value)


setattr(_OddNames, "a b", lambda self: self.__dict__["{0:3"])  # a method named "a b"
setattr(_OddNames, "é", property(lambda self: self.__dict__["{0:3"]))  # noqa: B010 - Python would normalize it


@pytest.mark.parametrize("key", ["0/0.' .encoding'", "0/0.'{0:3'", "0/0.class", "0/0.'a b'()", "0/0:'é'"])
def test_names_no_attribute_reference_spells_are_read_with_getattr(
        key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(MODULE)
    monkeypatch.setitem(sys.modules, MODULE, module)
    op = Operation(f"{MODULE}:f", "function", None, (), (), None, None)
    statements = [{"op": op.id, "args": [{"lit": ["int", 1]}], "kwargs": {}}]
    source = render_test(statements, {op.id: op}, Mismatch(key, ["i", 1], ["i", 2]), "test_g")
    assert "getattr(result, " in source, source

    def run_with(factory: object) -> None:
        module.f = factory  # type: ignore[attr-defined]
        namespace: dict = {}
        exec(compile(source, "odd_names.py", "exec"), namespace)
        namespace["test_g"]()

    run_with(_OddNames)  # base: the value 1 the key observed
    with pytest.raises(AssertionError):
        run_with(lambda value: _OddNames(value + 1))  # head


def test_a_value_that_could_not_be_observed_is_never_asserted() -> None:
    """Its `__len__` or `__iter__` raised while the worker looked: no check stands for that."""
    mismatch = Mismatch("0/0", ["unobservable", "RuntimeError", "no len"], ["list", 2])
    assert not can_pin(mismatch, "base") and can_pin(mismatch, "head")
    with pytest.raises(Unpinnable):
        render_test([{"op": f"{MODULE}:f", "args": [], "kwargs": {}}], F, mismatch, "test_g")
