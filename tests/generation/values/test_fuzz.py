"""Tests for `difforacle.generator.generation.values.fuzz`: GRT's impurity fuzzing of primitive literals."""

from __future__ import annotations

import datetime
import math
import random
import statistics

from difforacle.generator.generation.values.fuzz import SIGMA, fuzz_literal, fuzz_text


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


def test_edits_often_put_in_the_changed_codes_punctuation() -> None:
    """A setext underline `=====` becomes the mixed `==-==` the change is about far more often."""
    rng = random.Random(4)
    with_alphabet = [fuzz_text("Title\n=====\n", rng, "-") for _ in range(400)]
    without = [fuzz_text("Title\n=====\n", rng) for _ in range(400)]
    mixed = [e for e in with_alphabet if "=-" in e or "-=" in e]
    assert len(mixed) > 40 > sum("=-" in e or "-=" in e for e in without)


def test_other_literals_pass_through_and_bytes_stay_bytes() -> None:
    rng = random.Random(4)
    assert fuzz_literal(["none"], rng) == ["none"]
    assert fuzz_literal(["list", [["int", 1]]], rng) == ["list", [["int", 1]]]
    tag, text = fuzz_literal(["bytes", "616263"], rng)
    assert tag == "bytes" and bytes.fromhex(text) != b"abc"


def test_streams_and_files_get_one_edit_of_their_contents() -> None:
    rng = random.Random(6)
    for tag in ("textio", "path"):
        edited = {fuzz_literal([tag, "abc"], rng)[1] for _ in range(100)}
        assert "abc" not in edited or len(edited) > 1
        assert all(abs(len(text) - 3) <= 3 for text in edited) and len(edited) > 5
        assert fuzz_literal([tag, "abc"], rng)[0] == tag


def test_dates_and_times_move_and_keep_their_form() -> None:
    rng = random.Random(7)
    moved = [fuzz_literal(["datetime", "2024-02-29T12:30:45"], rng)[1] for _ in range(200)]
    assert "2024-02-28T12:30:45" in moved or "2024-03-01T12:30:45" in moved  # a day away
    assert "2024-02-29T12:30:44" in moved or "2024-02-29T12:30:46" in moved  # a second away
    assert all(datetime.datetime.fromisoformat(m) for m in moved)
    dates = {fuzz_literal(["date", "2000-01-01"], rng)[1] for _ in range(50)}
    assert all(len(d) == 10 and datetime.date.fromisoformat(d) for d in dates) and len(dates) > 5
    assert all(fuzz_literal(["date", "0001-01-01"], rng)[1] >= "0001-01-01" for _ in range(50))  # no overflow
    durations = [fuzz_literal(["timedelta", "60.0"], rng) for _ in range(200)]
    assert all(tag == "timedelta" and math.isfinite(float(seconds)) for tag, seconds in durations)
    assert len({seconds for _, seconds in durations}) > 20
