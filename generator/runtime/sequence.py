"""Call sequences on the host: the statements the generator builds, the workers run, the findings
shrink and the tests render, and what is done to them.

A sequence is a list of the worker protocol's `Statement`s (its wire form, so that it goes to a
worker as it is). An argument refers to an earlier statement's value (`{"ref": i}`) or is a
literal (`{"lit": ...}`); the helpers here keep those references right when statements are
spliced, dropped or followed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from ..worker.protocol import Arg, Statement
from ..worker.resolve import CALL, volume_target

CallSequence = list[Statement]


def sequence_key(statements: Sequence[Statement]) -> str:
    """The one text two equal sequences share: where a sequence is looked up or counted once."""
    return json.dumps(list(statements), sort_keys=True)


def prefix_keys(statements: Sequence[Statement]) -> Iterator[str]:
    """`sequence_key` of each non-empty prefix, shortest first, each statement encoded once (a
    list's JSON is its items' JSON joined by ", " between brackets)."""
    items: list[str] = []
    for statement in statements:
        items.append(json.dumps(statement, sort_keys=True))
        yield "[" + ", ".join(items) + "]"


def arguments(statement: Statement) -> Iterator[tuple[int | str, Arg]]:
    """The statement's arguments with their positions, then its keyword arguments by name."""
    yield from enumerate(statement["args"])
    yield from sorted(statement["kwargs"].items())


def argument_at(statement: Statement, place: int | str) -> Arg:
    """The statement's argument at `place`: a position, or a keyword's name (as `arguments` gives)."""
    return statement["args"][place] if isinstance(place, int) else statement["kwargs"][place]


def references(statement: Statement) -> list[int]:
    """The earlier statements whose values the statement takes: positional, then keyword."""
    return [arg["ref"] for arg in (*statement["args"], *statement["kwargs"].values()) if "ref" in arg]


def shift(statement: Statement, offset: int) -> Statement:
    """`statement` with its references moved `offset` statements later (spliced after others)."""
    if offset == 0:
        return statement

    def move(arg: Arg) -> Arg:
        return {"ref": arg["ref"] + offset} if "ref" in arg else arg

    return {"op": statement["op"], "args": [move(a) for a in statement["args"]],
            "kwargs": {k: move(a) for k, a in statement["kwargs"].items()}}


def renumbered(statement: Statement, new_index: dict[int, int]) -> Statement:
    """`statement` with each reference `i` replaced by `new_index[i]` (statements were dropped)."""
    def arg(a: Arg) -> Arg:
        return {"ref": new_index[a["ref"]]} if "ref" in a else a

    return {**statement, "args": [arg(a) for a in statement["args"]],
            "kwargs": {k: arg(a) for k, a in statement["kwargs"].items()}}


def dependents(statements: Sequence[Statement], indices: Sequence[int]) -> set[int]:
    """`indices` and every later statement that (transitively) refers to one of them."""
    closed = set(indices)
    for position, statement in enumerate(statements):
        if position not in closed and any(arg.get("ref") in closed for _, arg in arguments(statement)):
            closed.add(position)
    return closed


def plain_operation(op_id: str) -> str:
    """The operation a statement calls: `op_id`, or for a volume call (`pkg:f<x257>`) the
    operation it calls again and again (`pkg:f`)."""
    repeated = volume_target(op_id)
    return op_id if repeated is None else repeated[0]


def called(statement: Statement) -> int | None:
    """The statement whose value `statement` calls, if it calls a returned callable."""
    if statement["op"] != CALL or not statement["args"]:
        return None
    return statement["args"][0].get("ref")


def origin(statements: Sequence[Statement], index: int) -> str:
    """The operation a statement's value comes from: its own, or for a call of a returned callable,
    the origin of that callable (`cached` for `cached(cache)(func)(1)`)."""
    root, _ = _chain(statements, index)
    return plain_operation(statements[root]["op"])


def call_path(statements: Sequence[Statement], index: int) -> str:
    """The origin with a `()` per call of a returned callable that led to the statement
    (`pkg.mod:cached()()` for `cached(cache)(func)(1)`): differences of a decorator and of the
    wrapper it returns are told apart."""
    root, calls = _chain(statements, index)
    return plain_operation(statements[root]["op"]) + "()" * calls


def path_origin(path: str) -> str:
    """The origin a `call_path` starts from (`pkg.mod:cached` for `pkg.mod:cached()()`)."""
    return path.split("()", 1)[0]


def _chain(statements: Sequence[Statement], index: int) -> tuple[int, int]:
    """The statement whose value a chain of calls of returned callables starts from, and the calls."""
    calls = 0
    while (callee := called(statements[index])) is not None:
        index, calls = callee, calls + 1
    return index, calls
