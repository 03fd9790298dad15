"""GRT's impurity fuzzing of primitive inputs: values near the ones that already work.

A number taken from the mined constants or from earlier calls is replaced by a sample from
N(c, sigma^2) with sigma = 30 ("given values are already close to satisfying some of the
branch conditions"), or by a boundary value (0, -1, 1, c - 1, c + 1, a large number, NaN,
infinity); a string gets one random edit: insert, remove or replace a printable character,
or a substring (so do the contents of streams and files); dates and times move by a day, a
second or a Gaussian number of days. Other literals pass through unchanged. Objects are
fuzzed by calling one of their impure methods before reuse (see `Explorer`); this module
only knows literals.
"""

from __future__ import annotations

import datetime
import math
import random

from .structured import unicode_variant

SIGMA = 30.0  # GRT's (and Randoop's grt_fuzzing_stddev) standard deviation
LARGE = 2**31 - 1
PRINTABLE = [chr(code) for code in range(32, 127)]
UNICODE_RATIO = 0.15  # of text edits: a Unicode variant (structured.unicode_variant)
ALPHABET_RATIO = 0.5  # of the characters an edit puts in: one of the changed code's punctuation


def fuzz_literal(literal: list, rng: random.Random, unicode: bool = True, alphabet: str = "") -> list:
    """A perturbed copy of a tagged literal (`["int", 5]` -> `["int", 31]`); others unchanged.
    `unicode`: a text's edit is sometimes a Unicode look-alike (`s` -> `ſ`, `3` -> `٣`);
    `alphabet`: characters a text's inserted or replacing character is often taken from."""
    tag = literal[0]
    if tag == "str" and unicode and rng.random() < UNICODE_RATIO:
        return ["str", unicode_variant(literal[1], rng)]
    if tag == "int":
        return ["int", _fuzz_int(int(literal[1]), rng)]
    if tag == "float":
        return ["float", repr(_fuzz_float(float(literal[1]), rng))]
    if tag == "str":
        return ["str", fuzz_text(literal[1], rng, alphabet)]
    if tag in ("bytes", "bytesio"):
        text = bytes.fromhex(literal[1]).decode("latin-1")
        return [tag, fuzz_text(text, rng).encode("latin-1", "replace").hex()]
    if tag in ("textio", "path"):
        return [tag, fuzz_text(literal[1], rng)]
    if tag in ("datetime", "date"):
        return [tag, _fuzz_instant(literal[1], rng)]
    if tag == "timedelta":  # whole seconds: NaN and infinities are no durations
        return ["timedelta", repr(float(_fuzz_int(round(float(literal[1])), rng)))]
    return literal


def _fuzz_instant(iso: str, rng: random.Random) -> str:
    """A day or a second away, or a Gaussian number of days (sigma 30) away, within the calendar."""
    moment = datetime.datetime.fromisoformat(iso)
    step = rng.choice((datetime.timedelta(days=1), datetime.timedelta(seconds=1)))
    if rng.random() < 0.25:
        shift = rng.choice((step, -step))
    else:
        shift = datetime.timedelta(days=round(rng.gauss(0, SIGMA)))
    try:
        moment += shift
    except OverflowError:
        return iso
    return moment.isoformat() if "T" in iso else moment.date().isoformat()


def _character(rng: random.Random, alphabet: str) -> str:
    return rng.choice(alphabet) if alphabet and rng.random() < ALPHABET_RATIO else rng.choice(PRINTABLE)


def _fuzz_int(value: int, rng: random.Random) -> int:
    if rng.random() < 0.25:
        return rng.choice((0, -1, 1, value - 1, value + 1, LARGE, -LARGE))
    return round(rng.gauss(value, SIGMA))


def _fuzz_float(value: float, rng: random.Random) -> float:
    if not math.isfinite(value) or rng.random() < 0.25:
        return rng.choice((0.0, -1.0, 1.0, math.nan, math.inf, -math.inf, 1e308))
    return round(rng.gauss(value, SIGMA), 3)


def fuzz_text(text: str, rng: random.Random, alphabet: str = "") -> str:
    """One edit: insert, remove or replace a printable character, or keep a substring. Half the
    new characters come from `alphabet` when there is one: the punctuation the changed code
    spells (`=` and `-` of a setext underline, a backslash, a space), the characters that
    decide how a structured text parses."""
    edit = rng.randrange(4) if text else 0
    position = rng.randrange(len(text) + 1)
    if edit == 0:
        return text[:position] + _character(rng, alphabet) + text[position:]
    position = min(position, len(text) - 1)
    if edit == 1:
        return text[:position] + text[position + 1:]
    if edit == 2:
        return text[:position] + _character(rng, alphabet) + text[position + 1:]
    end = rng.randint(position, len(text))
    return text[position:end]
