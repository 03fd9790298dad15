"""Tests for generator.catalog: the host's view of the catalog and the PR's focus operations."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from difforacle.generator.catalog import (
    Catalog,
    Operation,
    Parameter,
    changed_at_import,
    focus_operations,
    impacted_units,
    operations_reaching,
    read_sources,
)
from difforacle.generator.model import ChangeSet, FileChange, Unit
from difforacle.generator.worker.introspect import build_catalog

MOD = "durations"
SOURCE = textwrap.dedent('''
    def _unit_seconds(unit):
        return {"s": 1, "m": 60, "h": 3600}[unit]


    def _split(text):
        return text[:-1], _unit_seconds(text[-1])


    def parse_duration(text):
        number, seconds = _split(text)
        return int(number) * seconds


    def describe(text):
        return f"{parse_duration(text)} seconds"


    def unrelated(x):
        return x + 1


    class Timer:
        def __init__(self, limit):
            self.limit = limit

        def expired(self, elapsed):
            return elapsed > self._grace()

        def _grace(self):
            return self.limit * 2

        def remaining(self, elapsed):
            return self.limit - elapsed


    class Clock:
        def __init__(self):
            self.now = 0

        def tick(self):
            self.now += 1

        def read(self):
            return self.now

        @staticmethod
        def zero():
            return Clock()


    class Other:
        def method(self):
            return 1
''')


def _op(qualname: str, kind: str, owner: str | None = None) -> dict:
    return {"id": f"{MOD}:{qualname}", "kind": kind, "owner": f"{MOD}.{owner}" if owner else None,
            "params": [{"name": "x", "kind": "POSITIONAL_OR_KEYWORD", "has_default": False,
                        "hints": ["builtins.int"], "choices": [["int", 1], ["int", 2]]}],
            "returns": ["builtins.int"], "file": f"/src/{MOD}.py", "line": 3, "end": 4}


CATALOG = {
    "operations": [
        _op("parse_duration", "function"), _op("describe", "function"), _op("unrelated", "function"),
        _op("Timer", "constructor", "Timer"), _op("Timer.expired", "method", "Timer"),
        _op("Timer.remaining", "method", "Timer"),
        _op("Clock", "constructor", "Clock"), _op("Clock.tick", "method", "Clock"),
        _op("Clock.read", "method", "Clock"), _op("Clock.zero", "static", "Clock"),
        _op("Other", "constructor", "Other"), _op("Other.method", "method", "Other"),
    ],
    "classes": {f"{MOD}.{name}": {"mro": [f"{MOD}.{name}"], "abstract": False}
                for name in ("Timer", "Clock", "Other")},
    "import_errors": {"broken": "SyntaxError: invalid syntax"},
}


def _unit(qualname: str, kind: str) -> Unit:
    return Unit(MOD, qualname, kind, "modified", f"{MOD}.py", 1, 2)  # type: ignore[arg-type]


def _changes(*units: Unit) -> ChangeSet:
    change = FileChange(f"{MOD}.py", f"{MOD}.py", MOD, frozenset({1}), frozenset({1}))
    return ChangeSet("0" * 40, (change,), units)


def _focus(*units: Unit) -> set[str]:
    return {op.partition(":")[2] for op in focus_operations(Catalog.from_json(CATALOG), _changes(*units),
                                                            {MOD: SOURCE})}


# ---------------------------------------------------------------- from_json


def test_from_json_builds_operations_and_parameters() -> None:
    catalog = Catalog.from_json(CATALOG)
    op = next(o for o in catalog.operations if o.id == f"{MOD}:Timer.expired")
    assert op == Operation(f"{MOD}:Timer.expired", "method", f"{MOD}.Timer",
                           (Parameter("x", "POSITIONAL_OR_KEYWORD", False, ("builtins.int",),
                                      (("int", 1), ("int", 2))),),
                           ("builtins.int",), f"/src/{MOD}.py", 3)
    assert (op.module, op.qualname, op.name) == (MOD, "Timer.expired", "expired")
    assert catalog.import_errors == {"broken": "SyntaxError: invalid syntax"}
    assert catalog.focus == set()
    assert [c.id for c in catalog.constructors_of(f"{MOD}.Timer")] == [f"{MOD}:Timer"]
    assert catalog.constructors_of(f"{MOD}.Nope") == []


def test_from_json_of_a_real_worker_catalog(tmp_path: Path) -> None:
    name = "dor_catalog_target"
    (tmp_path / f"{name}.py").write_text(SOURCE.replace("durations", name))
    sys.path.insert(0, str(tmp_path))
    try:
        catalog = Catalog.from_json(build_catalog([name]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
    kinds = {op.qualname: op.kind for op in catalog.operations}
    assert kinds["parse_duration"] == "function"
    assert kinds["Timer"] == "constructor" and kinds["Timer.expired"] == "method"
    assert kinds["Clock.zero"] == "static"
    assert "_unit_seconds" not in kinds and "Timer._grace" not in kinds
    assert catalog.classes[f"{name}.Timer"] == {"mro": [f"{name}.Timer"], "abstract": False}


# ---------------------------------------------------------------- focus_operations


def test_changed_function_is_focus() -> None:
    assert _focus(_unit("unrelated", "function")) == {"unrelated"}


def test_public_function_calling_a_changed_private_helper_is_focus() -> None:
    assert _focus(_unit("_split", "function")) == {"parse_duration", "describe"}


def test_callers_are_found_transitively() -> None:
    # describe -> parse_duration -> _split -> _unit_seconds
    assert _focus(_unit("_unit_seconds", "function")) == {"parse_duration", "describe"}


def test_method_calling_a_changed_private_method_is_focus() -> None:
    focus = _focus(_unit("Timer._grace", "method"))
    assert "Timer.expired" in focus
    assert "Timer.remaining" not in focus
    assert "Timer" in focus  # its constructor


def test_methods_of_a_changed_class_are_focus() -> None:
    assert _focus(_unit("Clock", "class")) == {"Clock.tick", "Clock.read", "Clock.zero"}


def test_constructor_of_a_class_with_a_changed_method_is_focus() -> None:
    assert _focus(_unit("Clock.read", "method")) == {"Clock", "Clock.read"}
    assert _focus(_unit("Timer.__init__", "method")) == {"Timer"}


def test_unrelated_operations_stay_out_of_focus() -> None:
    focus = _focus(_unit("Timer._grace", "method"), _unit("_split", "function"))
    assert not focus & {"unrelated", "Clock", "Clock.tick", "Other", "Other.method", "Timer.remaining"}


def test_changes_in_other_modules_do_not_leak_by_name() -> None:
    other = Unit("elsewhere", "_split", "function", "modified", "elsewhere.py", 1, 2)
    assert _focus(other) == set()


def test_no_changes_no_focus() -> None:
    assert _focus() == set()


def test_unparsable_source_still_focuses_changed_units() -> None:
    catalog = Catalog.from_json(CATALOG)
    focus = focus_operations(catalog, _changes(_unit("unrelated", "function")), {MOD: "def (:"})
    assert focus == {f"{MOD}:unrelated"}


@pytest.mark.parametrize("with_base", [True, False])
def test_read_sources(tmp_path: Path, with_base: bool) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    base_path = "pkg/mod.py" if with_base else None
    change = FileChange(base_path, "pkg/mod.py", "pkg.mod", frozenset(), frozenset())
    added = FileChange(None, "pkg/new.py", "pkg.new", frozenset(), frozenset({1}))
    gone = FileChange("pkg/gone.py", None, "pkg.gone", frozenset({1}), frozenset())
    sources = read_sources(tmp_path, ChangeSet("0" * 40, (change, added, gone), ()))
    assert sources == ({"pkg.mod": "X = 1\n"} if with_base else {})


IMPORT_TIME = textwrap.dedent('''
    TABLE = []


    def _register(word):
        TABLE.append(word.upper())


    def lookup(word):
        return word.upper() in TABLE


    _register("person")
''')


def _changed(module: str, qualname: str) -> ChangeSet:
    unit = Unit(module, qualname, "function", "modified", f"{module}.py", 1, 2)
    return ChangeSet("0" * 40, (FileChange(f"{module}.py", f"{module}.py", module, frozenset({1}),
                                           frozenset({1})),), (unit,))


def test_a_changed_function_called_at_import_makes_the_whole_module_the_focus() -> None:
    changes = _changed("words", "_register")
    assert changed_at_import(changes, {"words": IMPORT_TIME}) == {"words"}
    catalog = Catalog.from_json({"operations": [
        {"id": "words:lookup", "kind": "function", "owner": None, "params": [], "returns": []},
    ], "classes": {}})
    assert focus_operations(catalog, changes, {"words": IMPORT_TIME}) == {"words:lookup"}


def test_functions_called_only_from_function_bodies_are_not_import_time() -> None:
    assert changed_at_import(_changed("words", "lookup"), {"words": IMPORT_TIME}) == set()
    decorated = "def deco(f):\n    return f\n\n\n@deco\ndef g():\n    return deco(1)\n"
    assert changed_at_import(_changed("d", "deco"), {"d": decorated}) == {"d"}  # decorators run at import


SYNTAX_CALLS = textwrap.dedent('''
    class _Clock:
        def __enter__(self):
            return 1

        def __exit__(self, *exc):
            return False


    class Store:
        def __init__(self):
            self.clock = _Clock()
            self.items = {}

        def put(self, key, value):
            with self.clock:
                self.items[key] = value

        def has(self, key):
            return key in self.items
''')


def test_dunder_methods_are_reached_through_the_syntax_that_calls_them() -> None:
    changes = _changed("store", "_Clock.__enter__")
    catalog = Catalog.from_json({"operations": [
        {"id": "store:Store", "kind": "constructor", "owner": "store.Store", "params": [], "returns": []},
        {"id": "store:Store.put", "kind": "method", "owner": "store.Store", "params": [], "returns": []},
        {"id": "store:Store.has", "kind": "method", "owner": "store.Store", "params": [], "returns": []},
    ], "classes": {"store.Store": {"mro": ["store.Store"], "abstract": False}}})
    assert focus_operations(catalog, changes, {"store": SYNTAX_CALLS}) == {"store:Store.put"}


def test_a_change_no_operation_reaches_makes_the_module_the_target() -> None:
    source = "class _Hidden:\n    def tick(self):\n        return 1\n\n\ndef public():\n    return 2\n"
    catalog = Catalog.from_json({"operations": [
        {"id": "m:public", "kind": "function", "owner": None, "params": [], "returns": []},
    ], "classes": {}})
    assert focus_operations(catalog, _changed("m", "_Hidden.tick"), {"m": source}) == {"m:public"}


# ---------------------------------------------------------------- impacted_units (static, no catalog)


def _impacted(*units: Unit) -> set[str]:
    return {qualname for module, qualname in impacted_units(_changes(*units), {MOD: SOURCE}) if module == MOD}


def test_impacted_units_are_the_public_callers_transitively() -> None:
    # describe -> parse_duration -> _split -> _unit_seconds; _split is private, so left out
    assert _impacted(_unit("_unit_seconds", "function")) == {"parse_duration", "describe"}


def test_impacted_units_include_the_class_of_a_changed_method_but_not_the_changed_units() -> None:
    assert _impacted(_unit("Timer._grace", "method")) == {"Timer.expired", "Timer"}
    assert _impacted(_unit("Timer._grace", "method"), _unit("Timer.expired", "method")) == {"Timer"}
    assert _impacted(_unit("unrelated", "function")) == set()


def test_impacted_units_of_a_changed_class_are_the_functions_that_build_it() -> None:
    assert _impacted(_unit("Clock", "class")) == {"Clock.zero"}


# ---------------------------------------------------------------- operations_reaching


def _reaching(units: tuple[Unit, ...], wanted: set[str]) -> dict[str, set[str]]:
    found = operations_reaching(Catalog.from_json(CATALOG), _changes(*units), {MOD: SOURCE},
                                {(MOD, q) for q in wanted})
    return {q: {op.partition(":")[2] for op in ops} for (_, q), ops in found.items()}


def test_a_changed_private_helper_is_reached_through_its_public_callers() -> None:
    helper = _unit("_unit_seconds", "function")
    assert _reaching((helper,), {"_unit_seconds"}) == {"_unit_seconds": {"parse_duration", "describe"}}


def test_a_class_is_reached_through_its_operations_and_a_public_unit_through_itself() -> None:
    reached = _reaching((_unit("Timer._grace", "method"),), {"Timer", "Timer._grace", "unrelated"})
    assert reached["Timer"] == {"Timer", "Timer.expired", "Timer.remaining"}
    assert reached["Timer._grace"] == {"Timer.expired"}
    assert reached["unrelated"] == {"unrelated"}


def test_module_level_code_is_reached_through_every_operation_of_its_module() -> None:
    module_unit = Unit(MOD, "<module>", "module", "modified", f"{MOD}.py", 1, 1)
    reached = _reaching((module_unit,), {"<module>"})
    assert reached["<module>"] == {op["id"].partition(":")[2] for op in CATALOG["operations"]}
