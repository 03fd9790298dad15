"""Module-level values: a changed module's public constants, tables and objects built at import
are read and compared on both commits; a public name head removes is an API change."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RepoBuilder, make_pr, run_analyze

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


def test_an_entry_deep_in_a_table_built_at_import(builder: RepoBuilder) -> None:
    differences = _differences(builder, TABLES.replace('"u150": 1050', '"u150": 1051'))
    table = [d for d in differences if d.target == "timing.tables:UNITS"]
    assert table, differences
    assert 'units = UNITS\n    assert units["u150"] == 1050' in table[0].test
    assert (table[0].path, table[0].line) == ("timing/tables.py", 156)  # the changed entry's line


def test_a_public_constant_head_removes_is_an_api_change(builder: RepoBuilder) -> None:
    differences = _differences(builder, TABLES.replace('DEFAULT_UNIT, FALLBACK_UNIT = "u1", "u2"\n',
                                                       'DEFAULT_UNIT = "u1"\n'))
    [removed] = [d for d in differences if d.target == "timing.tables:FALLBACK_UNIT"]
    assert removed.kind == "api"


def test_values_off_by_their_switch(builder: RepoBuilder) -> None:
    from difforacle.generator.components import Components

    make_pr(builder, {"timing/__init__.py": "", "timing/tables.py": TABLES},
            {"timing/tables.py": TABLES.replace('"u150": 1050', '"u150": 1051')})
    report = run_analyze(builder, max_sequences=200, components=Components.without(["values"]))
    assert not [d for d in report.differences if d.target == "timing.tables:UNITS"]


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
