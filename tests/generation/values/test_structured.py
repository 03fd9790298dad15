"""Tests for `difforacle.generator.generation.values.structured`, structured strings: format
specifications, dates and times, URLs and Unicode look-alikes."""

from __future__ import annotations

import random
import re
import unicodedata

from difforacle.generator.generation.values.fuzz import fuzz_literal
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.generation.values.structured import (
    format_spec,
    structured,
    temporal,
    unicode_variant,
)

SPEC = re.compile(r"(?:.?[<>=^])?[+\- ]?#?0?\d*[,_]?(?:\.\d+)?[bcdeEfFgGnosxX%]?")


def test_format_specs_follow_the_mini_language() -> None:
    rng = random.Random(1)
    specs = [format_spec(rng) for _ in range(500)]
    assert all(SPEC.fullmatch(spec) for spec in specs)
    assert any("," in spec and spec.endswith("d") for spec in specs)  # `{:,d}`
    usable = [spec for spec in specs if _formats(1234567, spec)]
    assert len(usable) > 100  # most are specs int accepts


def _formats(value: int, spec: str) -> bool:
    try:
        format(value, spec)
    except (ValueError, OverflowError):
        return False
    return True


def test_temporal_shapes_include_partial_iso_times() -> None:
    rng = random.Random(2)
    shapes = {temporal(rng) for _ in range(400)}
    assert {"12:3045", "2024-02-29T12:30:45+01:00", "PT1H30M", "%Y-%m-%d"} <= shapes


def test_urls_come_often_where_the_seed_speaks_of_urls() -> None:
    rng = random.Random(6)
    near_urls = [structured(rng, "http://") for _ in range(400)]
    elsewhere = [structured(rng, "abc") for _ in range(400)]
    assert "http://:pass@example.com" in near_urls  # empty user info, which RFC 3986 allows
    assert sum("://" in s for s in near_urls) > 2 * sum("://" in s for s in elsewhere) > 0


def test_unicode_variants_look_like_the_text() -> None:
    rng = random.Random(3)
    variants = {unicode_variant("class 3", rng) for _ in range(300)}
    assert "claſs 3" in variants or "clasſ 3" in variants
    assert "class ٣" in variants  # an Arabic-Indic digit: str.isdigit() says yes, int() reads it
    assert any(unicodedata.combining(char) for variant in variants for char in variant)
    assert all(variant.casefold().replace("ſ", "s") != "class 3" or "ſ" in variant or variant != "class 3"
               for variant in variants)


def test_strings_mix_structured_ones_unless_switched_off() -> None:
    from difforacle.generator.generation.values.constants import Constants

    mixed = ValueGenerator(random.Random(4), Constants())
    plain = ValueGenerator(random.Random(4), Constants(), structured=False)
    drawn = [mixed.string()[1] for _ in range(600)]
    assert any(re.fullmatch(r"\d{4}-\d\d-\d\d.*|\d\d:\d\d.*|P.*", s) for s in drawn)
    assert not any(s in ("12:3045", "PT1H30M") for s in (plain.string()[1] for _ in range(600)))
    assert structured(random.Random(5), "abc")


def test_impurity_edits_text_into_unicode_look_alikes() -> None:
    rng = random.Random(6)
    edited = {fuzz_literal(["str", "s1"], rng)[1] for _ in range(300)}
    assert edited & {"ſ1", "s١", "s１", "s𝟙"}
    rng = random.Random(6)
    assert not {fuzz_literal(["str", "s1"], rng, unicode=False)[1] for _ in range(300)} & {"ſ1", "s١", "s１"}


def test_operations_and_parameters_named_for_urls() -> None:
    from difforacle.generator.generation.values.structured import speaks_of_urls, url

    assert speaks_of_urls("URL.__call__", "value") and speaks_of_urls("fetch", "href")
    assert speaks_of_urls("URLField._deserialize", "data") and speaks_of_urls("validate_uri", "text")
    assert not speaks_of_urls("Security.during", "curl_options")  # words, not substrings
    assert "://" in url(random.Random(1)) or ":" in url(random.Random(1))
