"""Volume calls in the worker: which operations keep state (`volume.keeps_state`), the distinct
inputs of each call and their source in a test, and a volume statement run as its N calls."""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.modules import imported

from difforacle.generator.worker.execute import SequenceRunner
from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.observe import Observer
from difforacle.generator.worker.protocol import SequenceResult
from difforacle.generator.worker.resolve import Missing, Resolver, Unbindable, volume_id, volume_target
from difforacle.generator.worker.tracer import ChangeTracer
from difforacle.generator.worker.volume import INDEX, keeps_state, varied, varied_source, varies

MODULE = "dor_volume_target"
SOURCE = textwrap.dedent('''
    import functools

    _seen = {}
    _order = []
    LIMIT = 3
    TABLE = {"a": 1}


    @functools.lru_cache(maxsize=128)
    def cached(text: str) -> str:
        return text.upper()


    def remember(key: str) -> int:
        _seen[key] = len(_seen)
        return _seen[key]


    def log(key: str) -> None:
        _order.append(key)


    def bump() -> None:
        global LIMIT
        LIMIT += 1


    def lookup(key: str) -> int:  # reads a module table, writes nothing
        return TABLE.get(key, 0)


    def pure(number: int) -> int:
        local = {}
        local[number] = number
        return len(local)


    class Box:
        def __init__(self) -> None:
            self.items = []

        def add(self, item: str) -> None:
            self.items.append(item)
            if len(self.items) > LIMIT:
                raise OverflowError(f"more than {LIMIT} items")

        def size(self) -> int:
            return len(self.items)

        def describe(self, prefix: str) -> str:
            return prefix + str(len(self.items))
''')


@pytest.fixture
def module(tmp_path: Path) -> Iterator[object]:
    with imported(tmp_path, MODULE, SOURCE) as found:
        yield found


def test_an_operation_keeps_state_when_it_caches_or_writes_its_object_or_module(module) -> None:
    keeps = {name: keeps_state(getattr(module, name), None)
             for name in ("cached", "remember", "log", "bump", "lookup", "pure")}
    assert keeps == {"cached": True, "remember": True, "log": True, "bump": True,
                     "lookup": False, "pure": False}
    box = module.Box
    assert keeps_state(box.add, box) and not keeps_state(box.size, box) and not keeps_state(box.describe, box)


def test_the_catalog_marks_the_operations_that_keep_state_only_with_volume_on(module) -> None:
    def marked(volume: bool) -> set[str]:
        catalog = build_catalog([MODULE], volume=volume)
        return {op["id"].partition(":")[2] for op in catalog["operations"] if op.get("state")}

    assert marked(True) == {"cached", "remember", "log", "bump", "Box.add"}
    assert marked(False) == set()


@pytest.mark.parametrize("tag, value", [("int", -3), ("int", 0), ("float", 0.5), ("str", "k"), ("str", ""),
                                        ("bytes", b"\x00"), ("bytes", b""), ("bool", True), ("none", None)])
def test_each_calls_input_and_its_source_in_a_test_agree(tag: str, value: object) -> None:
    for index in (0, 1, 128):
        assert eval(varied_source(tag, repr(value)), {INDEX: index}) == varied(tag, value, index)
    distinct = {varied(tag, value, index) for index in range(5)}
    assert len(distinct) == (1 if tag in ("bool", "none") else 5)


def test_a_statement_varies_when_one_of_its_literals_is_a_number_text_or_bytes() -> None:
    def statement(*args: dict, **kwargs: dict) -> dict:
        return {"op": "m:f", "args": list(args), "kwargs": kwargs}

    assert varies(statement({"ref": 0}, {"lit": ["str", "a"]}))
    assert varies(statement(flag={"lit": ["int", 1]}))
    assert not varies(statement({"ref": 0}, {"lit": ["bool", True]}, {"lit": ["none"]}))
    assert not varies(statement({"lit": ["float", "nan"]}))  # the sequence's one shared NaN stays one


def test_a_volume_id_names_its_operation_and_count() -> None:
    assert volume_target(volume_id("pkg:Box.add", 257)) == ("pkg:Box.add", 257)
    for op_id in ("pkg:Box.add", "pkg:Box.add<set>", "pkg:f<x>", "pkg:f<xab>"):
        assert volume_target(op_id) is None


def test_a_volume_operation_resolves_to_its_operation_and_checks_its_binding(module) -> None:
    resolver = Resolver()
    op = resolver.resolve(volume_id(f"{MODULE}:remember", 5))
    assert (op.kind, op.obj.op_id) == ("volume", f"{MODULE}:remember")
    assert op.callee(["k"]) == f"{MODULE}:remember"
    resolver.check_binding(op, ["k"], {})
    with pytest.raises(Unbindable):
        resolver.check_binding(op, ["k", "extra"], {})
    with pytest.raises(Missing):  # a value is read, not called again and again
        resolver.resolve(volume_id(f"{MODULE}:TABLE", 5))


def _run(statements: list[dict]) -> SequenceResult:
    previous = signal.getsignal(signal.SIGALRM)
    try:
        runner = SequenceRunner(Resolver(), Observer(), ChangeTracer(), 2.0, 0)
        return SequenceResult.from_json(runner.run(statements))
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_a_volume_statement_makes_its_calls_with_distinct_literals_and_returns_the_last(module) -> None:
    result = _run([{"op": volume_id(f"{MODULE}:remember", 4), "args": [{"lit": ["str", "k"]}], "kwargs": {}}])
    assert result.status == "ok"
    assert module._seen == {"k0": 0, "k1": 1, "k2": 2, "k3": 3}
    assert result.observations["0/0"] == ["i", 3]


def test_a_volume_statement_stops_at_the_first_call_that_raises(module) -> None:
    result = _run([{"op": f"{MODULE}:Box", "args": [], "kwargs": {}},
                   {"op": volume_id(f"{MODULE}:Box.add", 10), "args": [{"ref": 0}, {"lit": ["str", "x"]}],
                    "kwargs": {}}])
    assert result.status == "exception"
    assert result.observations["1/!"][:3] == ["E", "OverflowError", "more than 3 items"]
    assert result.observations["1/0.size()"] == ["i", 4]  # the box as the raising call left it
