"""The engine holds no answer of the real-change benchmark: no string of a case's witness and no
case's `needs` appears in its sources. Values come from the languages' grammars and from the project
under test; a pool built from the benchmark's own witnesses would measure nothing."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "real_changes" / "manifest.toml"
SHORTEST = 8  # shorter strings are words and names any code has ("build", "0.0.0")


def _engine_strings() -> dict[str, str]:
    """Every string constant of the engine's sources, with the file that holds it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.setdefault(node.value, str(path.relative_to(ROOT)))
    return found


def _case_strings(case: dict) -> set[str]:
    """The strings of a case's witness (its code's literals, and its lines) and its `needs`."""
    strings = {case.get("needs", "")}
    witness = case.get("witness", "")
    strings |= {line.strip() for line in witness.splitlines()}
    try:
        tree = ast.parse(witness)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    strings |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                and isinstance(node.value, str)}
    return {s for s in strings if len(s) >= SHORTEST}


CASES = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["case"]
ENGINE = _engine_strings()


def test_the_check_reads_the_engine_and_the_witnesses() -> None:
    assert len(ENGINE) > 1000 and "difforacle.worker/1" in ENGINE
    assert sum(bool(_case_strings(case)) for case in CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_no_string_of_the_case_is_in_the_engine(case: dict) -> None:
    inside = {text: ENGINE[text] for text in _case_strings(case) if text in ENGINE}
    substring = {text: file for text in _case_strings(case) for value, file in ENGINE.items()
                 if len(text) >= 2 * SHORTEST and text in value}
    assert not inside and not substring, f"{case['id']}: {inside or substring}"
