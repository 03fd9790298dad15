"""Module-level values: a changed module's public constants, tables and objects built at import
are read and compared on both commits; a public name head removes is an API change."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.worker.execute import MODULE_VALUE_ITEMS
from difforacle.generator.worker.introspect import build_catalog

UNITS = "".join(f'    "u{i}": {i * 7},\n' for i in range(200))
TABLES = f'''\
import re
from os import sep

__version__ = "1.0"
UNITS = {{
{UNITS}}}
WORD = re.compile(r"[a-z]+")
_PRIVATE = 3
DEFAULT_UNIT, FALLBACK_UNIT = "u1", "u2"


def seconds(unit: str) -> int:
    return UNITS[unit]
'''


def _differences(builder: RepoBuilder, after: str):
    make_pr(builder, {"timing/__init__.py": "", "timing/tables.py": TABLES}, {"timing/tables.py": after})
    return run_analyze(builder, max_sequences=200).differences


@pytest.mark.slow
def test_an_entry_deep_in_a_table_built_at_import(builder: RepoBuilder) -> None:
    differences = _differences(builder, TABLES.replace('"u150": 1050', '"u150": 1051'))
    table = [d for d in differences if d.target == "timing.tables:UNITS"]
    assert table, differences
    assert 'units = UNITS\n    assert units["u150"] == 1050' in table[0].test
    assert (table[0].path, table[0].line) == ("timing/tables.py", 156)  # the changed entry's line


@pytest.mark.slow
def test_a_changed_entry_past_the_walked_part_of_a_generated_table(builder: RepoBuilder) -> None:
    """A table of more entries than the worker walks (MODULE_VALUE_ITEMS): the entry the diff
    changed is walked too, wherever it is, and so compared."""
    rows = "".join(f"    'name{i:05d}': ({i * 3}, 'letter'),\n" for i in range(MODULE_VALUE_ITEMS * 3))
    generated = f"NAMES = {{\n{rows}}}\n"
    make_pr(builder, {"names/__init__.py": "", "names/generated.py": generated},
            {"names/generated.py": generated.replace("'name02500': (7500,", "'name02500': (7501,")})
    differences = run_analyze(builder, max_sequences=50).differences
    [table] = [d for d in differences if d.target == "names.generated:NAMES"]
    assert 'names = NAMES\n    assert names["name02500"][0] == 7500' in table.test
    assert (table.path, table.line) == ("names/generated.py", 2502)


@pytest.mark.slow
def test_a_public_constant_head_removes_is_an_api_change(builder: RepoBuilder) -> None:
    differences = _differences(builder, TABLES.replace('DEFAULT_UNIT, FALLBACK_UNIT = "u1", "u2"\n',
                                                       'DEFAULT_UNIT = "u1"\n'))
    [removed] = [d for d in differences if d.target == "timing.tables:FALLBACK_UNIT"]
    assert removed.kind == "api"


@pytest.mark.slow
def test_values_off_by_their_switch(builder: RepoBuilder) -> None:
    from difforacle.generator.generation.techniques import Components

    make_pr(builder, {"timing/__init__.py": "", "timing/tables.py": TABLES},
            {"timing/tables.py": TABLES.replace('"u150": 1050', '"u150": 1051')})
    report = run_analyze(builder, max_sequences=200, components=Components.without(["values"]))
    assert not [d for d in report.differences if d.target == "timing.tables:UNITS"]


@pytest.mark.slow
def test_a_changed_module_level_regex(builder: RepoBuilder) -> None:
    differences = _differences(builder, TABLES.replace('r"[a-z]+"', 'r"[a-z]*"'))
    [regex] = [d for d in differences if d.target == "timing.tables:WORD"]
    assert "re.compile('[a-z]+')" in regex.base


def test_the_catalog_reads_only_the_modules_own_public_values(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tables.py").write_text(TABLES)
    (tmp_path / "listed.py").write_text('__all__ = ["SHOWN"]\nSHOWN = 1\nHIDDEN = 2\n')
    (tmp_path / "_private.py").write_text("TABLE = {1: 2}\n")  # no public names in a private module
    (tmp_path / "typed.py").write_text("import typing\n\nT = typing.TypeVar('T')\nAlias = dict[str, int]\n"
                                       "Either = typing.Union[int, str]\nPair = int | str\nLIMIT = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    operations = build_catalog(["tables", "listed", "_private", "typed"])["operations"]
    values = {op["id"]: op for op in operations if op["kind"] == "value"}
    # not the imported `sep`, `_PRIVATE`, `__version__`, the function, nor `HIDDEN` (not in __all__)
    assert sorted(values) == ["listed:SHOWN", "tables:DEFAULT_UNIT", "tables:FALLBACK_UNIT", "tables:UNITS",
                              "tables:WORD", "typed:LIMIT"]  # no TypeVar, alias or union
    assert values["tables:UNITS"]["returns"] == ["builtins.dict"]
    assert values["tables:UNITS"]["line"] == 5


HOOKS = '''\
from typing import TypedDict


class SpecOpts(TypedDict):
    firstresult: bool


class Marker:
    def __call__(self, name: str) -> str:
        return name.upper()
'''
PACKAGE = '''\
__all__ = [
    "Marker",
    "SpecOpts",
]
from ._hooks import Marker, SpecOpts
'''


@pytest.mark.slow
def test_a_name_the_package_stops_exporting_is_an_api_change(builder: RepoBuilder) -> None:
    """A `TypedDict` re-exported from a private module has no operation of its own (no signature);
    renaming it in the package's `__all__` and imports is still found, at the `__all__` line."""
    renamed = {"hooks/_hooks.py": HOOKS.replace("SpecOpts", "SpecOptions"),
               "hooks/__init__.py": PACKAGE.replace("SpecOpts", "SpecOptions")}
    make_pr(builder, {"hooks/__init__.py": PACKAGE, "hooks/_hooks.py": HOOKS}, renamed)
    differences = run_analyze(builder, max_sequences=200).differences
    [removed] = [d for d in differences if d.target == "hooks:SpecOpts<export>"]
    assert removed.kind == "api"
    assert (removed.path, removed.line) == ("hooks/__init__.py", 3)
    assert "hooks.SpecOpts" in removed.test and "import hooks" in removed.test


def test_an_exported_name_that_moved_is_no_difference(builder: RepoBuilder) -> None:
    """Moving a class to another private module, still exported under its name, changes nothing."""
    moved = {"hooks/_hooks.py": "from ._opts import SpecOpts\n" + HOOKS.split("\n\n\n", 1)[1],
             "hooks/_opts.py": HOOKS.split("\n\n\n")[0] + "\n\n\n" + HOOKS.split("\n\n\n")[1],
             "hooks/__init__.py": PACKAGE}
    make_pr(builder, {"hooks/__init__.py": PACKAGE, "hooks/_hooks.py": HOOKS}, moved)
    report = run_analyze(builder, max_sequences=200)
    assert not [d for d in report.differences if d.target.endswith("<export>")], report.differences


def test_the_catalog_lists_exports_without_operations(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "hooks"
    package.mkdir()
    (package / "_hooks.py").write_text(HOOKS)
    (package / "__init__.py").write_text(PACKAGE)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "_impl.py").write_text("LIMIT = 3\n\n\ndef helper():\n    return 1\n")
    (tmp_path / "plain" / "__init__.py").write_text(
        "from . import _impl\nfrom ._impl import LIMIT, helper as run\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    operations = build_catalog(["hooks", "plain"])["operations"]
    exports = {op["id"]: op["line"] for op in operations if op["kind"] == "export"}
    # by `__all__` (with its lines); without one, the package's public imports (not the submodule)
    assert exports == {"hooks:Marker<export>": 2, "hooks:SpecOpts<export>": 3,
                       "plain:LIMIT<export>": 2, "plain:run<export>": 2}


LOCALES = '''\
class Locale:
    timeframes = {"day": "a day", "week": "a week"}

    def describe(self, key: str, count: int) -> str:
        return self.timeframes[key] if count == 1 else f"{count} {key}s"


class Dutch(Locale):
    _cache = {}
    timeframes = {
        "day": "een dag",
        "week": "een week",
    }

    @property
    def short(self) -> str:
        return "nl"
'''


def test_an_entry_of_a_changed_class_table(builder: RepoBuilder) -> None:
    """A class body's table is read whole, as a module's is: the entry that differs is reported
    at its line whatever input the methods reading it would need."""
    make_pr(builder, {"talk/__init__.py": "", "talk/locales.py": LOCALES},
            {"talk/locales.py": LOCALES.replace('"week": "een week"', '"week": "week"')})
    differences = run_analyze(builder, max_sequences=50).differences
    [table] = [d for d in differences if d.target == "talk.locales:Dutch.timeframes"]
    assert "from talk.locales import Dutch" in table.test
    assert 'timeframes = Dutch.timeframes\n    assert timeframes["week"] == "een week"' in table.test
    assert (table.path, table.line) == ("talk/locales.py", 12)  # the changed entry's line
    assert [(entry.change, entry.entry) for entry in table.entries] == [("changed", "['week']")]


def test_class_values_are_listed_only_as_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locales.py").write_text(LOCALES)
    monkeypatch.syspath_prepend(str(tmp_path))
    asked = ["locales:Dutch.timeframes", "locales:Dutch.short", "locales:Dutch.describe",
             "locales:Dutch.gone"]
    operations = {op["id"]: op for op in build_catalog(["locales"], class_values=asked)["operations"]}
    values = {op_id: op for op_id, op in operations.items() if op["kind"] == "value"}
    assert sorted(values) == ["locales:Dutch.timeframes"]  # not a property, a method or a missing name
    assert (values["locales:Dutch.timeframes"]["line"], values["locales:Dutch.timeframes"]["end"]) == (10, 13)
    assert values["locales:Dutch.timeframes"]["file"].endswith("locales.py")
    assert "locales:Locale.timeframes" not in operations  # only what was asked


@pytest.mark.slow
def test_a_large_table_built_by_code_says_only_its_first_entries_were_compared(builder: RepoBuilder) -> None:
    """A table the diff names no entry of (built by a comprehension) is walked to MODULE_VALUE_ITEMS
    only: the report says so, rather than passing over a change past them in silence."""
    size = MODULE_VALUE_ITEMS * 2
    built = f"CODES = {{f'name{{i:05d}}': i * 3 for i in range({size})}}\n"
    make_pr(builder, {"names/__init__.py": "", "names/built.py": built},
            {"names/built.py": built.replace("i * 3", "i * 3 + (i == 1500)")})
    report = run_analyze(builder, max_sequences=30)
    assert not [d for d in report.differences if d.target == "names.built:CODES"]  # entry 1500: not walked
    [note] = [n for n in report.notes if "names.built:CODES" in n]
    assert note == (f"`names.built:CODES` holds {size:,} entries and its changed lines name none of them (it "
                    f"is not written out as a dict, list or tuple): its first {MODULE_VALUE_ITEMS:,} were "
                    "compared, and a change past them is not seen.")


@pytest.mark.slow
def test_a_large_table_written_out_needs_no_such_note(builder: RepoBuilder) -> None:
    size = MODULE_VALUE_ITEMS * 2
    written = "CODES = {\n" + "".join(f"    'name{i:05d}': {i * 3},\n" for i in range(size)) + "}\n"
    make_pr(builder, {"names/__init__.py": "", "names/built.py": written},
            {"names/built.py": written.replace("'name01500': 4500,", "'name01500': 4501,")})
    report = run_analyze(builder, max_sequences=30)
    assert [(d.target, d.base, d.head) for d in report.differences] == [("names.built:CODES", "4500", "4501")]
    assert not [n for n in report.notes if "CODES" in n]
