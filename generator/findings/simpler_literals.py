"""Simpler versions of a literal argument, simplest first, Hypothesis-style.

Every literal has a `weight`, a non-negative integer that orders literals by simplicity
(None < False < True < small non-negative ints < ...). `simpler` yields only candidates of
strictly lower weight, so a minimizer that accepts candidates from here always terminates.
Integers move toward 0, strings, bytes and containers get shorter (then their items
simpler), floats move toward short decimals and integers, callbacks toward simpler returns, streams and
files toward simpler contents, dates and times to 2000-01-01.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..worker.literals import SUBCLASS_TAGS, container_tag

ITEM_LIMIT = 16  # containers and texts longer than this only get halved, not item by item
# Characters from simplest to least simple (as Hypothesis orders them): digits, then letters.
CHARACTERS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
OTHER_CHARACTER = len(CHARACTERS)  # the rank of every other character
SIMPLE_INSTANTS = ("2000-01-01T00:00:00", "2000-01-01")  # what dates and times shrink to

Literal = list


def weight(lit: Literal) -> int:
    """How complicated a literal is: the minimizer's measure of progress."""
    tag = lit[0]
    if tag == "none":
        return 0
    if tag == "bool":
        return 2 if lit[1] else 1
    if tag == "int":
        value = int(lit[1])
        return 3 + 2 * abs(value) + (value < 0)
    if tag == "float":
        return 3 + _float_weight(float(lit[1]))
    if tag == "str":  # length first, then each character's rank
        return 3 + (OTHER_CHARACTER + 1) * len(lit[1]) + sum(_rank(c) for c in lit[1])
    if tag == "bytes":
        return 3 + 3 * (len(lit[1]) // 2)
    if tag in ("list", "tuple", "set", "frozenset"):
        return 3 + sum(1 + weight(item) for item in lit[1])
    if tag == "dict":
        return 3 + sum(1 + weight(k) + weight(v) for k, v in lit[1])
    if tag in SUBCLASS_TAGS:  # a little more than the plain container, which it shrinks to
        return 2 + weight([container_tag(tag), lit[1]])
    if tag in ("fn", "counter"):
        inner = lit[1] if tag == "fn" else ["int", lit[1]]
        return 4 + weight(inner)
    if tag == "raises":
        return 4 + weight(["str", lit[2]])
    if tag in ("textio", "path"):
        return 4 + weight(["str", lit[1]])
    if tag == "bytesio":
        return 4 + weight(["bytes", lit[1]])
    if tag in ("datetime", "date"):
        return 4 + (lit[1] not in SIMPLE_INSTANTS) * 100
    if tag == "timedelta":
        return 4 + _float_weight(float(lit[1]))
    return 1_000  # unknown tags are never shrunk, and cost the most


def _float_weight(value: float) -> int:
    if math.isnan(value) or math.isinf(value):
        return 10_000
    digits = len(repr(abs(value)).removesuffix(".0"))
    return 20 * digits + min(int(abs(value)), 10**6) + (value < 0) + (value != int(value))


def simpler(lit: Literal) -> Iterator[Literal]:
    """Candidates strictly simpler than `lit`, simplest first, without duplicates."""
    limit = weight(lit)
    seen: set[str] = set()
    for candidate in _candidates(lit):
        text = repr(candidate)
        if text not in seen and weight(candidate) < limit:
            seen.add(text)
            yield candidate


def _candidates(lit: Literal) -> Iterator[Literal]:
    tag = lit[0]
    if tag == "bool":
        yield ["bool", False]
    elif tag == "int":
        yield from (["int", v] for v in _smaller_ints(int(lit[1])))
    elif tag == "float":
        yield from (["float", repr(v)] for v in _shorter_floats(float(lit[1])))
    elif tag == "str":
        yield from (["str", s] for s in _shorter_sequences(lit[1]))
        yield from (["str", s] for s in _simpler_characters(lit[1]))
    elif tag == "bytes":
        data = bytes.fromhex(lit[1])
        yield from (["bytes", b.hex()] for b in _shorter_sequences(data))
    elif tag in ("list", "tuple", "set", "frozenset", "dict"):
        yield from ([tag, items] for items in _simpler_items(lit[1], tag == "dict"))
    elif tag in SUBCLASS_TAGS:
        base = container_tag(tag)
        yield [base, lit[1]]
        yield from ([tag, items] for items in _simpler_items(lit[1], base == "dict"))
    elif tag == "fn":
        yield from (["fn", inner] for inner in simpler(lit[1]))
    elif tag == "counter":
        yield from (["counter", v] for v in _smaller_ints(int(lit[1])))
    elif tag == "raises":
        yield from (["raises", lit[1], inner[1]] for inner in simpler(["str", lit[2]]))
    elif tag in ("textio", "path"):
        yield from ([tag, inner[1]] for inner in simpler(["str", lit[1]]))
    elif tag == "bytesio":
        yield from (["bytesio", inner[1]] for inner in simpler(["bytes", lit[1]]))
    elif tag in ("datetime", "date"):
        yield [tag, SIMPLE_INSTANTS[0] if tag == "datetime" else SIMPLE_INSTANTS[1]]
    elif tag == "timedelta":
        yield from (["timedelta", repr(v)] for v in _shorter_floats(float(lit[1])))


def _smaller_ints(value: int) -> Iterator[int]:
    """0, then the positive twin, then halving and stepping toward 0."""
    yield 0
    if value < 0:
        yield -value
    magnitude = abs(value)
    sign = -1 if value < 0 else 1
    for smaller in (1, magnitude // 2, magnitude - 1):
        if 0 < smaller < magnitude:
            yield smaller
            yield sign * smaller


def _shorter_floats(value: float) -> Iterator[float]:
    """0.0 and 1.0, the nearest integer, then fewer decimals; NaN and inf become finite."""
    yield 0.0
    yield 1.0
    if math.isnan(value) or math.isinf(value):
        return
    if value < 0:
        yield -value
    yield float(round(value))
    for digits in range(1, 6):
        yield round(value, digits)


def _shorter_sequences(data: str | bytes | list) -> Iterator:
    """Empty, the first item, halves, then each item dropped (short sequences only)."""
    yield data[:0]
    yield data[:1]
    half = len(data) // 2
    yield data[:half]
    yield data[half:]
    if len(data) <= ITEM_LIMIT:
        for index in range(len(data) - 1, -1, -1):
            yield data[:index] + data[index + 1:]


def _rank(character: str) -> int:
    rank = CHARACTERS.find(character)
    return OTHER_CHARACTER if rank < 0 else rank


def _simpler_characters(text: str) -> Iterator[str]:
    """One character at a time replaced by a simpler one ('5h' -> '0h', '1h', '2h', '4h')."""
    for index, character in enumerate(text[:ITEM_LIMIT]):
        rank = _rank(character)
        for simpler_rank in sorted({0, 1, rank // 2, rank - 1}):
            if simpler_rank < rank:
                yield text[:index] + CHARACTERS[simpler_rank] + text[index + 1:]


def _simpler_items(items: list, pairs: bool) -> Iterator[list]:
    """Fewer items (as for sequences, then two neighbours at once: an option and its value in a
    command line), then each item simpler in place (keys of a dict stay)."""
    yield from _shorter_sequences(items)
    if not pairs and 2 < len(items) <= ITEM_LIMIT:
        for index in range(len(items) - 2, -1, -1):
            yield items[:index] + items[index + 2:]
    for index, item in enumerate(items[:ITEM_LIMIT]):
        if pairs:
            key, value = item
            replacements = [[key, v] for v in simpler(value)]
        else:
            replacements = list(simpler(item))
        for replacement in replacements[:4]:
            yield [*items[:index], replacement, *items[index + 1:]]

