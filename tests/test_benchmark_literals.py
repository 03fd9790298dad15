"""The engine holds no answer of the real-change benchmark: no string, telling number or
distinctive identifier of a case's witness, no case's `needs`, no string its diff adds and no
title of its pull request appears in its sources. Values come from the languages' grammars and from
the project under test; a pool built from the benchmark's own witnesses would measure nothing.

What a case's diff and title hold comes from the libraries' histories, which CI does not have: it is
kept as hashes in `benchmarks/real_changes/case_literals.json` (`run.py --case-literals`)."""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import keyword
import math
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "real_changes" / "manifest.toml"
LITERALS = ROOT / "benchmarks" / "real_changes" / "case_literals.json"
SHORTEST = 8  # shorter strings are words and names any code has ("build", "0.0.0")
SHORTEST_NAME = 5  # identifiers this long or longer, when distinctive (`as_string`, `OrderedBidict`)
# names any code has: the builtins, keywords, the standard library's modules and the public names of
# the modules witnesses import from it
STANDARD = {*dir(builtins), *keyword.kwlist, *sys.stdlib_module_names,
            *(name for module in ("io", "decimal", "datetime", "collections", "copy", "pickle", "json",
                                  "re", "enum", "fractions", "functools", "itertools", "pathlib", "typing",
                                  "warnings")
              for name in dir(__import__(module)))}


def _engine_constants(kind: type | tuple[type, ...]) -> dict[object, str]:
    """Every constant of `kind` in the engine's sources, with the file that holds it."""
    found: dict[object, str] = {}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Constant) and isinstance(node.value, kind)
                    and not isinstance(node.value, bool)):
                found.setdefault(node.value, str(path.relative_to(ROOT)))
    return found


def _witness(case: dict) -> ast.Module:
    try:
        return ast.parse(case.get("witness", ""))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _distinctive(name: str) -> bool:
    """A name no English word is: with an inner underscore, a digit or an inner capital."""
    core = name.strip("_")
    return (len(name) >= SHORTEST_NAME and not (name.startswith("__") and name.endswith("__"))
            and any(c == "_" or c.isdigit() or (c.isupper() and i) for i, c in enumerate(core)))


def _case_names(case: dict) -> set[str]:
    """The distinctive identifiers a case's witness uses (the library's API: `as_string`), not the
    standard library's."""
    found = {node.id if isinstance(node, ast.Name) else node.attr for node in ast.walk(_witness(case))
             if isinstance(node, ast.Name | ast.Attribute)}
    return {name for name in found if _distinctive(name) and name not in STANDARD}


def _telling(number: float) -> bool:
    """A number with three significant digits or more that is no power of two or one less (3660,
    not 3600, 1024 or 65535)."""
    digits = f"{abs(number):.10g}".replace(".", "").strip("0")
    whole = float(number).is_integer() and number > 0
    return len(digits) >= 3 and not (whole and (math.log2(number).is_integer()
                                                or math.log2(number + 1).is_integer()))


def _case_numbers(case: dict) -> set[float]:
    return {node.value for node in ast.walk(_witness(case)) if isinstance(node, ast.Constant)
            and isinstance(node.value, int | float) and not isinstance(node.value, bool)
            and _telling(node.value)}


def _case_strings(case: dict) -> set[str]:
    """The strings of a case's witness (its code's literals, and its lines) and its `needs`."""
    strings = {case.get("needs", "")}
    witness = case.get("witness", "")
    strings |= {line.strip() for line in witness.splitlines()}
    strings |= {node.value for node in ast.walk(_witness(case)) if isinstance(node, ast.Constant)
                and isinstance(node.value, str)}
    return {s for s in strings if len(s) >= SHORTEST and s not in STANDARD}


CASES = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["case"]
ENGINE = _engine_constants(str)
ENGINE_NUMBERS = _engine_constants((int, float))
ENGINE_HASHES = {hashlib.sha256(text.encode()).hexdigest(): file for text, file in ENGINE.items()}
HELD = json.loads(LITERALS.read_text(encoding="utf-8"))["cases"]


def test_the_check_reads_the_engine_and_the_witnesses() -> None:
    assert len(ENGINE) > 1000 and "difforacle.worker/1" in ENGINE
    assert sum(bool(_case_strings(case)) for case in CASES) >= 40
    assert sum(bool(_case_names(case)) for case in CASES) >= 40
    assert sum(bool(_case_numbers(case)) for case in CASES) >= 5
    assert _telling(3660) and not _telling(3600) and not _telling(1024) and not _telling(65535)
    assert _distinctive("as_string") and _distinctive("OrderedBidict") and not _distinctive("parse")


def test_every_case_has_its_diffs_literals_kept() -> None:
    """A new case needs `run.py --case-literals` (with the mirrors) before it can be checked here."""
    assert {case["id"] for case in CASES} <= set(HELD)
    assert sum(map(len, HELD.values())) > 300


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_no_string_of_the_case_is_in_the_engine(case: dict) -> None:
    inside = {text: ENGINE[text] for text in _case_strings(case) if text in ENGINE}
    substring = {text: file for text in _case_strings(case) for value, file in ENGINE.items()
                 if len(text) >= 2 * SHORTEST and text in value}
    assert not inside and not substring, f"{case['id']}: {inside or substring}"
    names = {name: ENGINE[name] for name in _case_names(case) if name in ENGINE}
    assert not names, f"{case['id']}: identifiers of its witness: {names}"
    numbers = {number: ENGINE_NUMBERS[number] for number in _case_numbers(case) if number in ENGINE_NUMBERS}
    assert not numbers, f"{case['id']}: numbers of its witness: {numbers}"
    held = {ENGINE_HASHES[digest] for digest in HELD.get(case["id"], ()) if digest in ENGINE_HASHES}
    assert not held, f"{case['id']}: strings its diff adds, or its title, are in {held}"
