"""How carving tells a test's outcome in another run of the same files
(`difforacle.generator.generation.seeds.carving.outcome_there`): the evidence behind `asserted-by-pr`
and the tests a pull request rewrote. End to end: tests/end_to_end/test_triage.py."""

from __future__ import annotations

from difforacle.generator.generation.seeds.carving import outcome_there

HERE = ["t.py::test_a", "t.py::test_parse[09:05:03 x]", "t.py::test_parse[09:05:03 y]", "t.py::test_b[1]"]


def test_a_test_is_found_again_by_its_id_or_by_its_position_among_its_parameters() -> None:
    there = {"t.py::test_a": "passed", "t.py::test_parse[09:05:07 x]": "failed",
             "t.py::test_parse[09:05:07 y]": "passed", "t.py::test_b[2]": "passed",
             "t.py::test_b[3]": "failed"}
    assert outcome_there("t.py::test_a", HERE, there) == "passed"
    # ids that hold a value of the moment: the same test at the same position
    assert outcome_there("t.py::test_parse[09:05:03 x]", HERE, there) == "failed"
    assert outcome_there("t.py::test_parse[09:05:03 y]", HERE, there) == "passed"
    # as many parameters on neither side: it cannot be told, and is no evidence either way
    assert outcome_there("t.py::test_b[1]", HERE, there) is None


def test_a_file_that_ran_nothing_there_failed_there() -> None:
    # a test file that does not import on the other side (a name the pull request adds) runs no test
    assert outcome_there("t.py::test_a", HERE, {"u.py::test_c": "passed"}) == "failed"
    assert outcome_there("t.py::test_parse[09:05:03 x]", HERE, {}) == "failed"
