"""`difforacle.generator.worker.asynchronous`: coroutines awaited, asynchronous generators drained."""

from __future__ import annotations

import pytest

from difforacle.generator.worker.asynchronous import DRAINED_ITEMS, settled


async def _half(n: int) -> int:
    return n // 2


async def _count(n: int):
    for i in range(n):
        yield i


async def _fails() -> None:
    raise ValueError("no price")


def test_a_coroutine_is_awaited_and_a_generator_drained() -> None:
    assert settled(_half(7)) == 3
    assert settled(_count(3)) == [0, 1, 2]
    assert settled(_count(10**6)) == list(range(DRAINED_ITEMS))  # its first items, as a snapshot's
    assert settled([1, 2]) == [1, 2]  # any other value as it is


def test_what_a_coroutine_raises_is_what_the_call_raises() -> None:
    with pytest.raises(ValueError, match="no price"):
        settled(_fails())
