"""Tests for `difforacle.generator.generation.values.structured`, structured strings: format
specifications, dates and times, URLs and Unicode look-alikes."""

from __future__ import annotations

import random
import re
import unicodedata
import urllib.parse

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


def test_temporal_shapes_follow_iso_8601_whole_and_partial() -> None:
    rng = random.Random(2)
    shapes = {temporal(rng) for _ in range(2000)}
    assert {"12:3045", "PT1H30M", "%Y-%m-%d", "2024-W09-4"} <= shapes
    timestamps = [s for s in shapes if re.fullmatch(r"\d{4}-?\d\d-?\d\d[T ]\d.*", s)]
    assert {s[10] for s in timestamps if s[4] == "-"} == {"T", " "}  # RFC 3339 allows a space
    fractions = {len(m.group(1)) for s in shapes if (m := re.search(r"\d\d[.,](\d+)", s))}
    assert fractions == {1, 2, 3, 4, 5, 6}  # a decimal fraction of any length, not one spelling
    assert any(s.endswith(("Z", "+01:00", "-05")) for s in timestamps)
    parsed = [s for s in timestamps if _iso_datetime(s)]
    assert len(parsed) > len(timestamps) / 3  # most extended-format timestamps are valid ones


def _iso_datetime(text: str) -> bool:
    import datetime

    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def test_urls_are_composed_from_rfc_3986s_components() -> None:
    rng = random.Random(6)
    near_urls = [structured(rng, "http://") for _ in range(600)]
    elsewhere = [structured(rng, "abc") for _ in range(600)]
    assert sum("://" in s for s in near_urls) > 2 * sum("://" in s for s in elsewhere) > 0
    parts = [urllib.parse.urlsplit(u) for u in near_urls if "://" in u and " " not in u and "a@b" not in u]
    userinfo = {(bool(p.username), p.password) for p in parts if "@" in p.netloc}
    assert {(True, None), (True, "secret"), (False, "secret"), (True, "")} <= userinfo  # each part or not
    assert "foo://example.com:8042/over/there?name=ferret#nose" in near_urls  # the RFC's own example
    assert any(_port_error(p) for p in parts)  # a port out of range


def _port_error(parts: urllib.parse.SplitResult) -> bool:
    try:
        parts.port  # noqa: B018
    except ValueError:
        return True
    return False


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
    urls = [url(random.Random(seed)) for seed in range(40)]
    assert sum("://" in u for u in urls) > 25  # mostly absolute URLs, some RFC 3986 references
