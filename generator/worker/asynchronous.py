"""Asynchronous code run to its end, so that its results are observed like any value.

A coroutine function's call only makes a coroutine; an asynchronous generator's, an iterator
nothing drains. Neither runs a line of the function until awaited, so a library of `async def`
functions would show no difference at all. A statement whose value is a coroutine is awaited in an
event loop of its own (`asyncio.run`, as a rendered test does it); one whose value is an
asynchronous generator is drained into a list of its first items (`drained`, whose source the
rendered test carries). Standard library only: this module runs in the worker.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

DRAINED_ITEMS = 20  # items taken from an asynchronous generator, as many as a snapshot observes


async def drained(items: Any, limit: int = DRAINED_ITEMS) -> list:
    """The first `limit` items an asynchronous iterator yields, as a list."""
    found = []
    async for item in items:
        found.append(item)
        if len(found) >= limit:
            break
    return found


def settled(value: Any) -> Any:
    """A coroutine's result, an asynchronous generator's first items; any other value as it is."""
    if inspect.iscoroutine(value):
        return asyncio.run(value)
    if inspect.isasyncgen(value):
        return asyncio.run(drained(value))
    return value
