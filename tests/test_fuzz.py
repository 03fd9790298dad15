"""Tests for generator.fuzz: GRT's impurity fuzzing of primitive literals."""

from __future__ import annotations

import math
import random
import statistics

from generator.fuzz import SIGMA, fuzz_literal, fuzz_text


def test_integers_are_gaussian_around_the_value_with_boundaries_now_and_then() -> None:
    rng = random.Random(1)
    samples = [fuzz_literal(["int", 100], rng)[1] for _ in range(4000)]
    assert all(isinstance(n, int) for n in samples)
    near = [n for n in samples if n not in (0, -1, 1, 99, 101, 2**31 - 1, -(2**31 - 1))]
    assert abs(statistics.mean(near) - 100) < 3 and abs(statistics.stdev(near) - SIGMA) < 3
    assert {0, -1, 1, 99, 101} <= set(samples)


def test_floats_stay_floats_and_reach_the_special_values() -> None:
    rng = random.Random(2)
    values = [float(fuzz_literal(["float", "2.5"], rng)[1]) for _ in range(500)]
    assert any(math.isnan(v) for v in values) and any(math.isinf(v) for v in values)
    assert fuzz_literal(["float", "nan"], rng)[0] == "float"


def test_strings_get_one_edit() -> None:
    rng = random.Random(3)
    edits = {fuzz_text("abc", rng) for _ in range(300)}
    assert any(len(e) == 4 for e in edits) and any(len(e) == 2 and e in ("ab", "ac", "bc") for e in edits)
    assert any(len(e) == 3 and e != "abc" for e in edits)
    assert all(len(fuzz_text("", rng)) == 1 for _ in range(20))  # an empty string can only grow


def test_other_literals_pass_through_and_bytes_stay_bytes() -> None:
    rng = random.Random(4)
    assert fuzz_literal(["none"], rng) == ["none"]
    assert fuzz_literal(["list", [["int", 1]]], rng) == ["list", [["int", 1]]]
    tag, text = fuzz_literal(["bytes", "616263"], rng)
    assert tag == "bytes" and bytes.fromhex(text) != b"abc"
