"""Tests for generator.worker.protocol: observation keys, result records and the handshake."""

from __future__ import annotations

import pytest

from difforacle.generator.worker.protocol import (
    ExecutedLines,
    ObservationKey,
    SequenceResult,
    Status,
    Step,
    attribute_step,
    call_step,
    digest_key,
    exception_key,
    item_step,
    lost_record,
    parse_steps,
    property_step,
    value_key,
    wrap_step,
)


def test_exception_key() -> None:
    key = ObservationKey.parse("3/!")
    assert (key.statement, key.variable, key.steps, key.is_exception) == (3, None, (), True)
    assert key.text == exception_key(3) == "3/!" and key.observation == "!"


def test_result_and_argument_keys() -> None:
    result = ObservationKey.parse("2/2")
    assert result.observes_result and not result.through_observer and result.path == ""
    assert result.observation == "result"
    argument = ObservationKey.parse("12/0:total")
    assert (argument.statement, argument.variable) == (12, 0)
    assert argument.steps == (Step("property", "total"),)
    assert argument.through_observer and not argument.observes_result
    assert argument.observation == "argument:total" and argument.text == "12/0:total"


@pytest.mark.parametrize(("path", "steps"), [
    (".size()", [Step("call", "size")]),
    (".items[0]@len", [Step("attr", "items"), Step("item", "0"), Step("wrap", "len")]),
    ("['a:b()@len']", [Step("item", "'a:b()@len'")]),
    ("['x]y'][1]", [Step("item", "'x]y'"), Step("item", "1")]),
    ("@list[2].name", [Step("wrap", "list"), Step("item", "2"), Step("attr", "name")]),
])
def test_paths_with_item_keys_of_any_characters(path: str, steps: list[Step]) -> None:
    assert parse_steps(path) == steps
    assert ObservationKey.parse(f"1/0{path}").path == path


def test_the_worker_builders_and_the_host_parser_agree() -> None:
    path = (attribute_step("items") + item_step("a:b") + call_step("size") + property_step("p")
            + wrap_step("len"))
    key = ObservationKey.parse(value_key(4, 1) + path)
    assert [step.kind for step in key.steps] == ["attr", "item", "call", "property", "wrap"]
    assert key.text == "4/1" + path and key.steps[1].text == "'a:b'"
    assert (digest_key(4, 4), digest_key(4, 1)) == ("4", "4/1")


def test_dict_keys_that_look_like_observers_are_items_not_observers() -> None:
    assert not ObservationKey.parse("3/0['a:b']").through_observer


def test_unparseable_path_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot parse"):
        parse_steps("[unterminated")


def test_a_result_record_is_decoded_once_into_its_type() -> None:
    record = {"status": "exception", "obs": {"0/0": ["i", 1], "1/!": ["E", "KeyError", "'a'", "builtins"]},
              "n": 1, "hit": True, "ms": 0.5, "types": [["builtins.int"]], "digests": {"0": "ab"},
              "reusable": [True], "callees": ["m:f", "m:g"], "covered": [[1, "/f.py", 3]],
              "arcs": [["/f.py", 3, 4]]}
    result = SequenceResult.from_json(record)
    assert result.status is Status.EXCEPTION and result.status == "exception"
    assert (result.executed, result.hit, result.milliseconds, result.lost) == (1, True, 0.5, False)
    assert result.observations["1/!"][1] == "KeyError" and result.callees == ["m:f", "m:g"]
    assert result.lines == ExecutedLines([(1, "/f.py", 3)], [("/f.py", 3, 4)])
    result.forget_observations()
    assert result.observations == {} and result.types == [["builtins.int"]]


def test_a_lost_process_is_a_crash_at_its_statement() -> None:
    result = SequenceResult.from_json(lost_record("hang", 2))
    assert result.status is Status.CRASH and result.lost and result.executed == 2
    assert result.observations == {"2/!": ["E", "Hang", "hang"]}
