"""Tests for `difforacle.generator.planning.impact`: which code reaches the changed units, from the
base sources."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from support.catalog_samples import CATALOG, MOD, SOURCE, real_catalog

from difforacle.generator.changes.model import ChangeSet, FileChange, Unit
from difforacle.generator.planning.impact import Impact, read_sources, table_entries
from difforacle.generator.runtime.catalog import Catalog, Operation
from difforacle.generator.worker.protocol import OperationKind


def _unit(qualname: str, kind: str) -> Unit:
    return Unit(MOD, qualname, kind, "modified", f"{MOD}.py", 1, 2)  # type: ignore[arg-type]


def _changes(*units: Unit) -> ChangeSet:
    change = FileChange(f"{MOD}.py", f"{MOD}.py", MOD, frozenset({1}), frozenset({1}))
    return ChangeSet("0" * 40, (change,), units)


def _focus(*units: Unit) -> set[str]:
    impact = Impact.of(_changes(*units), {MOD: SOURCE})
    return {op.partition(":")[2] for op in impact.focus(Catalog.from_json(CATALOG).operations)}


# ---------------------------------------------------------------- focus


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


def test_methods_of_a_changed_class_are_focus() -> None:  # and its constructor: the first step to them
    assert _focus(_unit("Clock", "class")) == {"Clock", "Clock.tick", "Clock.read", "Clock.zero"}


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
    focus = Impact.of(_changes(_unit("unrelated", "function")), {MOD: "def (:"}).focus(catalog.operations)
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
    impact = Impact.of(changes, {"words": IMPORT_TIME})
    assert impact.at_import == {"words"}
    catalog = Catalog.from_json({"operations": [
        {"id": "words:lookup", "kind": "function", "owner": None, "params": [], "returns": []},
    ], "classes": {}})
    assert impact.focus(catalog.operations) == {"words:lookup"}


def test_functions_called_only_from_function_bodies_are_not_import_time() -> None:
    assert Impact.of(_changed("words", "lookup"), {"words": IMPORT_TIME}).at_import == set()
    decorated = "def deco(f):\n    return f\n\n\n@deco\ndef g():\n    return deco(1)\n"
    assert Impact.of(_changed("d", "deco"), {"d": decorated}).at_import == {"d"}  # decorators run at import


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
    assert Impact.of(changes, {"store": SYNTAX_CALLS}).focus(catalog.operations) == {"store:Store.put"}


def test_a_change_no_operation_reaches_makes_the_module_the_target() -> None:
    source = "class _Hidden:\n    def tick(self):\n        return 1\n\n\ndef public():\n    return 2\n"
    catalog = Catalog.from_json({"operations": [
        {"id": "m:public", "kind": "function", "owner": None, "params": [], "returns": []},
    ], "classes": {}})
    assert Impact.of(_changed("m", "_Hidden.tick"), {"m": source}).focus(catalog.operations) == {"m:public"}


# ---------------------------------------------------------------- impacted units (tier 2)


def _impacted(*units: Unit) -> set[str]:
    impacted = Impact.of(_changes(*units), {MOD: SOURCE}).impacted
    return {qualname for module, qualname in impacted if module == MOD}


def test_impacted_units_are_the_public_callers_transitively() -> None:
    # describe -> parse_duration -> _split -> _unit_seconds; _split is private, so left out
    assert _impacted(_unit("_unit_seconds", "function")) == {"parse_duration", "describe"}


def test_impacted_units_include_the_class_of_a_changed_method_but_not_the_changed_units() -> None:
    assert _impacted(_unit("Timer._grace", "method")) == {"Timer.expired", "Timer"}
    assert _impacted(_unit("Timer._grace", "method"), _unit("Timer.expired", "method")) == {"Timer"}
    assert _impacted(_unit("unrelated", "function")) == set()


def test_impacted_units_of_a_changed_class_are_the_functions_that_build_it() -> None:
    assert _impacted(_unit("Clock", "class")) == {"Clock.zero"}


# ---------------------------------------------------------------- reaching


def _reaching(units: tuple[Unit, ...], wanted: set[str]) -> dict[str, set[str]]:
    impact = Impact.of(_changes(*units), {MOD: SOURCE})
    found = impact.reaching(Catalog.from_json(CATALOG).operations, {(MOD, q) for q in wanted})
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


# ---------------------------------------------------------------- the source's own operations


STATIC = textwrap.dedent('''
    import functools

    __all__ = ["Meter", "parse", "Broken"]


    class Broken(ValueError):
        pass


    class Meter:
        def __init__(self, window=10):
            self.window = window

        def __eq__(self, other):
            return True

        def __len__(self):
            return 0

        def add(self, amount):
            return amount

        @property
        def size(self):
            return 1

        @staticmethod
        def zero():
            return Meter(0)

        @classmethod
        def of(cls, window):
            return cls(window)

        def _hidden(self):
            return 2


    if True:
        def parse(text):
            return text


    def unexported(x):
        return x
''')


def test_the_sources_operations_are_those_a_worker_lists(tmp_path: Path) -> None:
    """The plan is made before anything is imported: the operations the source defines stand in
    for the worker's catalog, and must be the same ones."""
    name = "dor_static_target"
    static = {op.id.partition(":")[2]: op.kind for op in Impact.of(_changes(), {name: STATIC}).definitions}
    # (the protocol operations the catalog adds, `copy:deepcopy` and the like, are not the module's)
    operations = real_catalog(tmp_path, name, STATIC).operations
    listed = {op.qualname: op.kind for op in operations if op.module == name}
    assert static == listed
    assert static == {"parse": "function", "Meter": "constructor", "Meter.__eq__": "method",
                      "Meter.add": "method", "Meter.zero": "static", "Meter.of": "static",
                      "Broken": "constructor",  # an exception class: its message is behaviour
                      "unexported": "function"}  # public, though `__all__` leaves it out


def test_innermost_is_the_smallest_definition_around_a_line(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "m.py").write_text(STATIC)
    impact = Impact.of(_changes(), {}, {"base": tmp_path / "base"})
    lines = STATIC.splitlines()
    assert impact.innermost("base", "m.py", lines.index("        return amount") + 1) == "Meter.add"
    assert impact.innermost("base", "m.py", lines.index("class Meter:") + 1) == "Meter"
    assert impact.innermost("base", "m.py", 1) == "<module>"
    assert impact.innermost("head", "m.py", 1) == "<module>"  # no head root given: nothing parsed


TABLE = textwrap.dedent('''\
    def _csv_row(cells):
        return ",".join(cells)


    def _tsv_row(cells):
        return "\\t".join(cells)


    def _quote(cell):
        return '"' + cell + '"'


    FORMATS = {"csv": _csv_row, "tsv": _tsv_row}


    def render(rows, fmt):
        return "\\n".join(FORMATS[fmt]([_quote(c) for c in row]) for row in rows)


    class _Validator:
        def _process_name(self, value):
            return value.strip()

        def __check(self, value):
            return value


    def _setters(on_setattr):
        return list(on_setattr)


    class _Builder:
        def __init__(self, on_setattr):
            self.setters = _setters(on_setattr)


    def _outer():
        def _inner():
            return 1
        return _inner
    ''')


def test_changed_private_code_no_public_code_calls_is_reached_directly() -> None:
    units = [Unit("tab", qualname, kind, status, "tab.py", 1, 2)  # type: ignore[arg-type]
             for qualname, kind, status in [
                 ("_csv_row", "function", "modified"),  # only in a table
                 ("_quote", "function", "modified"),  # render calls it
                 ("_tsv_row", "function", "added"),  # base has none to compare
                 ("_Validator._process_name", "method", "modified"),  # only through getattr, say
                 ("_Validator.__check", "method", "modified"),  # name-mangled
                 ("_outer.<locals>._inner", "function", "modified"),  # nested
                 ("_setters", "function", "modified"),  # a private caller calls it: it adapts to it
                 ("render", "function", "modified")]]  # public
    change = FileChange("tab.py", "tab.py", "tab", frozenset({1}), frozenset({1}))
    impact = Impact.of(ChangeSet("0" * 40, (change,), tuple(units)), {"tab": TABLE})
    assert impact.reached_directly() == ["tab:_Validator._process_name", "tab:_csv_row"]


BUILT = textwrap.dedent('''\
    class Meter:
        def __init__(self, volts):
            self.volts = _clip(volts)

        def read(self):
            return self.volts


    class _Probe:
        def __init__(self, volts):
            self.volts = volts


    def _clip(volts):
        return max(0, volts)


    def measure(volts):
        return Meter(volts).read()


    def unrelated():
        return 1
''')


def _built_impact(*changed: str) -> Impact:
    units = tuple(Unit("pkg.meter", q, "method" if "." in q else "function", "modified", "pkg/meter.py", 1, 2)
                  for q in changed)
    change = FileChange("pkg/meter.py", "pkg/meter.py", "pkg.meter", frozenset({1}), frozenset({1}))
    return Impact.of(ChangeSet("0" * 40, (change,), units), {"pkg.meter": BUILT})


def test_a_helper_of_a_constructor_is_reached_through_the_class_and_whoever_calls_it() -> None:
    impact = _built_impact("_clip")
    operations = impact.definitions
    reached = impact.reaching(operations, {("pkg.meter", "_clip")})
    # `Meter(volts)` runs `Meter.__init__`, which calls `_clip`: the constructor and `measure` reach it,
    # and the module is no longer a whole-module target for want of any operation reaching it
    assert reached == {("pkg.meter", "_clip"): {"pkg.meter:Meter", "pkg.meter:measure"}}
    assert impact.whole_modules(operations) == set()
    assert impact.focus(operations) == {"pkg.meter:Meter", "pkg.meter:measure"}


def test_a_private_classs_constructor_nothing_calls_is_still_reached_directly() -> None:
    # the class its construction belongs to is no caller: nothing in the module builds `_Probe`
    assert _built_impact("_Probe.__init__").reached_directly() == ["pkg.meter:_Probe.__init__"]
    assert _built_impact("_clip").reached_directly() == []  # `Meter.__init__` calls it


DISPATCH = textwrap.dedent('''
    import functools


    class Style:
        def __init__(self, row):
            self.row = row


    def _pipe_row(cells):
        return "|" + "|".join(cells) + "|"


    def _grid_row(width, cells):
        return "+" * width


    def _make(name):
        return name


    _STYLES = {
        "pipe": Style(row=_pipe_row),
        "grid": Style(row=functools.partial(_grid_row, 2)),
    }
    DEFAULT = _make("pipe")
    HANDLERS = [_pipe_row]


    def render(rows, style="pipe"):
        return "\\n".join(_STYLES[style].row(row) for row in rows)


    def other(rows):
        return len(rows)
''')


def test_a_table_holds_functions_under_keys_and_its_readers_may_call_them() -> None:
    entries = table_entries(ast.parse(DISPATCH))
    assert sorted({(e.table, e.name, e.key) for e in entries}) == [
        ("HANDLERS", "_pipe_row", None), ("_STYLES", "_grid_row", "grid"), ("_STYLES", "_pipe_row", "pipe")]
    # calls made while the table is built (`Style(...)`, `_make(...)`) are not held
    [grid] = [e for e in entries if e.name == "_grid_row"]
    assert DISPATCH.splitlines()[grid.line - 1].strip().startswith('"grid":')
    impact = Impact.of(_changed("fmt", "_grid_row"), {"fmt": DISPATCH})
    assert impact.reached_by[("fmt", "_grid_row")] == {("fmt", "_grid_row"), ("fmt", "render")}
    catalog = Catalog.from_json({"operations": [
        {"id": f"fmt:{name}", "kind": "function", "owner": None, "params": [], "returns": []}
        for name in ("render", "other")], "classes": {}})
    assert impact.focus(catalog.operations) == {"fmt:render"}
    # its readers pass it the table's arguments: it is still called directly as well
    assert impact.reached_directly() == ["fmt:_grid_row"]


def test_a_changed_module_level_statement_makes_the_whole_module_the_focus() -> None:
    source = ("import re\n\n_END = re.compile(r'[ \\t]+$')\n\n\n"
              "def clean(text):\n    return _END.sub('', text)\n")
    unit = Unit("text", "<module>", "module", "modified", "text.py", 3, 3)
    changes = ChangeSet("0" * 40, (FileChange("text.py", "text.py", "text", frozenset({3}), frozenset({3})),),
                        (unit,))
    catalog = Catalog.from_json({"operations": [
        {"id": "text:clean", "kind": "function", "owner": None, "params": [], "returns": []},
    ], "classes": {}})
    impact = Impact.of(changes, {"text": source})
    assert impact.whole_modules(catalog.operations) == {"text"}
    assert impact.focus(catalog.operations) == {"text:clean"}  # it reads the changed pattern


# a package whose rules table a private parser reads, and whose public items call the parser
RULES = "import re\n\nRULES = {'end': re.compile(r'$')}\n\n\ndef helper(text):\n    return text.strip()\n"
PARSER = textwrap.dedent("""\
    from ._rules import RULES, helper as _helper


    def parse(text):
        return RULES['end'].search(text)


    def tidy(text):
        return _helper(text)


    def unrelated(text):
        return text
    """)
ITEMS = textwrap.dedent("""\
    from . import _rules
    from ._parser import parse as _parse, unrelated


    class Item:
        def __init__(self, text):
            self.match = _parse(text)


    class Other:
        def __init__(self, text):
            self.text = unrelated(text)


    def pattern():
        return _rules.RULES['end']
    """)
FUNCTIONS = (("_parser", "parse"), ("_parser", "tidy"), ("_parser", "unrelated"), ("items", "pattern"))
PACKAGE_OPERATIONS = [Operation(f"pkg.{module}:{name}", OperationKind.FUNCTION, None, (), (), None, None)
                      for module, name in FUNCTIONS] + [
    Operation(f"pkg.items:{name}", OperationKind.CONSTRUCTOR, f"pkg.items.{name}", (), (), None, None)
    for name in ("Item", "Other")]


def _package_impact(unit: Unit, lines: frozenset[int]) -> Impact:
    change = FileChange("pkg/_rules.py", "pkg/_rules.py", "pkg._rules", lines, lines)
    return Impact.of(ChangeSet("0" * 40, (change,), (unit,)), {"pkg._rules": RULES},
                     importers={"pkg._parser": PARSER, "pkg.items": ITEMS})


def test_a_changed_table_is_reached_through_the_modules_that_import_it() -> None:
    module_level = Unit("pkg._rules", "<module>", "module", "modified", "pkg/_rules.py", 3, 3)
    impact = _package_impact(module_level, frozenset({3}))
    # parse reads RULES as imported; Item calls parse under another name; pattern reads _rules.RULES
    reached = {("pkg._parser", "parse"), ("pkg.items", "Item"), ("pkg.items", "Item.__init__"),
               ("pkg.items", "pattern")}
    assert impact.imported_by[("pkg._rules", "<module>")] == reached
    focus = impact.focus(PACKAGE_OPERATIONS)
    assert {"pkg._parser:parse", "pkg.items:Item", "pkg.items:pattern"} <= focus
    assert not focus & {"pkg._parser:tidy", "pkg._parser:unrelated", "pkg.items:Other"}
    reaching = impact.reaching(PACKAGE_OPERATIONS, {("pkg._rules", "<module>")})
    assert reaching[("pkg._rules", "<module>")] == {"pkg._parser:parse", "pkg.items:Item",
                                                    "pkg.items:pattern"}


def test_a_changed_function_is_reached_through_the_name_a_module_imports_it_by() -> None:
    impact = _package_impact(Unit("pkg._rules", "helper", "function", "modified", "pkg/_rules.py", 6, 7),
                             frozenset({7}))
    assert impact.imported_by[("pkg._rules", "helper")] == {("pkg._parser", "tidy")}
    assert impact.focus(PACKAGE_OPERATIONS) == {"pkg._parser:tidy"}


def test_the_classes_whose_methods_or_body_changed_are_subclassed() -> None:
    units = (_unit("Timer._grace", "method"), _unit("Clock", "class"), _unit("_split", "function"),
             Unit(MOD, "Gone.method", "method", "removed", f"{MOD}.py", 1, 2),
             _unit("_Private.method", "method"))  # no user subclasses a private class
    assert Impact.of(_changes(*units), {MOD: SOURCE}).subclassed() == [f"{MOD}:Clock", f"{MOD}:Timer"]


LOCALES = textwrap.dedent("""\
    class Locale:
        timeframes = {"year": "a year"}

        def describe(self, key):
            return self._format(key)

        def _format(self, key):
            return self.timeframes[key]

        def name(self):
            return type(self).__name__


    class Turkish(Locale):
        timeframes = {
            "year": "bir yil",
        }
    """)


def test_a_changed_class_table_is_reached_through_the_inherited_methods_that_read_it() -> None:
    unit = Unit("loc", "Turkish", "class", "modified", "loc.py", 15, 18)
    change = FileChange("loc.py", "loc.py", "loc", frozenset({17}), frozenset({17}))
    impact = Impact.of(ChangeSet("0" * 40, (change,), (unit,)), {"loc": LOCALES})
    assert impact.read_by[("loc", "Turkish")] == {("loc", "Locale._format"), ("loc", "Locale.describe")}
    kinds = {"Locale": OperationKind.CONSTRUCTOR, "Turkish": OperationKind.CONSTRUCTOR,
             "Locale.describe": OperationKind.METHOD, "Locale.name": OperationKind.METHOD}
    operations = [Operation(f"loc:{name}", kind, f"loc.{name.split('.')[0]}", (), (), None, None)
                  for name, kind in kinds.items()]
    assert impact.focus(operations) == {"loc:Turkish", "loc:Locale.describe"}


def test_the_public_names_a_changed_class_body_binds_are_read_as_values() -> None:
    source = LOCALES.replace('"bir yil",\n', '"bir yil",\n    }\n    _cache = {\n')
    unit = Unit("loc", "Turkish", "class", "modified", "loc.py", 15, 20)
    change = FileChange("loc.py", "loc.py", "loc", frozenset({17, 19}), frozenset({17, 19}))
    impact = Impact.of(ChangeSet("0" * 40, (change,), (unit,)), {"loc": source})
    assert impact.class_values() == ["loc:Turkish.timeframes"]  # not the private `_cache`
    value = Operation("loc:Turkish.timeframes", OperationKind.VALUE, None, (), (), None, None)
    assert "loc:Turkish.timeframes" in impact.focus([value])
    private = Unit("loc", "_Turkish", "class", "modified", "loc.py", 15, 20)
    hidden = Impact.of(ChangeSet("0" * 40, (change,), (private,)),
                       {"loc": source.replace("Turkish", "_Turkish")})
    assert hidden.class_values() == []  # a private class's data is no API
