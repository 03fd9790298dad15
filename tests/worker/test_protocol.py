"""Tests for `difforacle.generator.worker.protocol`: observation keys, result records and the handshake."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from difforacle.generator.worker.protocol import (
    ExecutedLines,
    MalformedKey,
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
    statement_of,
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


# ---------------------------------------------------------------- any name round-trips

BUILDERS = {"attr": attribute_step, "property": property_step, "call": call_step}


@pytest.mark.parametrize(("name", "path"), [
    (" .encoding", ".' .encoding'"),  # a progress-bar library's attribute: the first crash
    ("{0:3", ".'{0:3'"),  # the second one
    ("", ".''"),
    ("it's", '."it\'s"'),
    ("a.b[0]", ".'a.b[0]'"),
    ("x()", ".'x()'"),
    ("é", ".'é'"),
    ("class", ".class"),  # a keyword is an identifier: bare in a key (the renderer uses getattr)
    ("_private1", "._private1"),
])
def test_attribute_names_that_are_no_identifiers_are_quoted(name: str, path: str) -> None:
    assert attribute_step(name) == path
    assert parse_steps(path) == [Step("attr", name)]
    assert parse_steps(path + "@len") == [Step("attr", name), Step("wrap", "len")]
    assert parse_steps(call_step(name)) == [Step("call", name)]
    assert parse_steps(property_step(name) + ".size()") == [Step("property", name), Step("call", "size")]


@pytest.mark.parametrize("path", [
    ".'abc'",  # an identifier is written bare: the quoted form is no key of ours
    ".'it\\'s'",  # repr writes "it's": another quoting of the same name
    ".'unterminated",
    ".'a'b",
    ". .encoding",  # what the old grammar choked on, written without quotes
    ".{0:3",
    ":()",
    "@'len'",
    "['a'",
    "[]",
])
def test_every_accepted_path_is_the_one_form_the_builders_write(path: str) -> None:
    with pytest.raises(MalformedKey, match="cannot parse"):
        parse_steps(path)


@pytest.mark.parametrize("text", ["", "3", "/0", "a/0", "3/", "3/x", "-1/0", "3/0.", "3/0:"])
def test_malformed_keys_are_malformed_key_errors(text: str) -> None:
    with pytest.raises(MalformedKey):
        ObservationKey.parse(text)


def test_statement_of_a_malformed_key_is_a_malformed_key_error() -> None:
    assert statement_of("12/0.' a'") == 12
    with pytest.raises(MalformedKey):
        statement_of("x/0")


# Names include lone surrogates (a name from C code or `setattr` may hold one) and quotes.
NAMES = st.one_of(st.text(), st.text(st.characters(codec=None, categories=None), max_size=8),
                  st.text(st.characters(categories=["Cs"]), max_size=3),
                  st.text("'\"\\.:[]()@{} !0aZ_", max_size=8))
ITEM_KEYS = st.one_of(st.text(), st.integers(), st.booleans(),
                      st.text("'\"\\]", max_size=6))


@st.composite
def steps(draw: st.DrawFn) -> tuple[str, Step]:
    """A step as the worker's builders write it, and the step the host must read back."""
    kind = draw(st.sampled_from(["attr", "property", "call", "item", "wrap"]))
    if kind == "item":
        key = draw(ITEM_KEYS)
        return item_step(key), Step("item", repr(key))
    if kind == "wrap":
        name = draw(st.sampled_from(["len", "list", "str", "repr"]))
        return wrap_step(name), Step("wrap", name)
    name = draw(NAMES)
    return BUILDERS[kind](name), Step(kind, name)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.lists(steps(), max_size=6))
def test_any_path_of_any_names_and_item_keys_round_trips(statement: int, variable: int,
                                                        drawn: list[tuple[str, Step]]) -> None:
    text = value_key(statement, variable) + "".join(source for source, _ in drawn)
    key = ObservationKey.parse(text)
    assert (key.statement, key.variable) == (statement, variable)
    assert list(key.steps) == [step for _, step in drawn]
    assert key.text == text and statement_of(text) == statement
    for step in key.steps:
        if step.kind == "item":  # the item literal reads back as the key itself
            assert repr(ast.literal_eval(step.text)) == step.text


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
