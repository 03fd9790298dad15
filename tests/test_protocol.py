"""Tests for generator.keys: observation keys parsed into statement, variable and access path."""

from __future__ import annotations

import pytest

from generator.keys import Token, parse_key, tokenize


def test_exception_key() -> None:
    key = parse_key("3/!")
    assert (key.statement, key.var, key.tokens, key.is_exception) == (3, None, (), True)


def test_result_and_argument_keys() -> None:
    result = parse_key("2/2")
    assert result.observes_result and not result.through_observer and result.suffix == ""
    argument = parse_key("12/0:total")
    assert (argument.statement, argument.var) == (12, 0)
    assert argument.tokens == (Token("property", "total"),)
    assert argument.through_observer and not argument.observes_result


@pytest.mark.parametrize(("suffix", "tokens"), [
    (".size()", [Token("call", "size")]),
    (".items[0]@len", [Token("attr", "items"), Token("item", "0"), Token("wrap", "len")]),
    ("['a:b()@len']", [Token("item", "'a:b()@len'")]),
    ("['x]y'][1]", [Token("item", "'x]y'"), Token("item", "1")]),
    ("@list[2].name", [Token("wrap", "list"), Token("item", "2"), Token("attr", "name")]),
])
def test_tokenize_handles_item_keys_with_any_characters(suffix: str, tokens: list[Token]) -> None:
    assert tokenize(suffix) == tokens
    assert parse_key(f"1/0{suffix}").suffix == suffix


def test_dict_keys_that_look_like_observers_are_items_not_observers() -> None:
    assert not parse_key("3/0['a:b']").through_observer


def test_unparseable_suffix_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot parse"):
        tokenize("[unterminated")
