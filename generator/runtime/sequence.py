"""Call sequences on the host: the statements the generator builds, the workers run and the tests render."""

from __future__ import annotations

from collections.abc import Sequence

from ..worker.resolve import CALL


def shift(statement: dict, offset: int) -> dict:
    """`statement` with its references moved `offset` statements later (spliced after others)."""
    if offset == 0:
        return statement

    def move(arg: dict) -> dict:
        return {"ref": arg["ref"] + offset} if "ref" in arg else arg

    return {"op": statement["op"], "args": [move(a) for a in statement["args"]],
            "kwargs": {k: move(a) for k, a in statement["kwargs"].items()}}


Statements = Sequence[dict]



def origin(statements: Statements, index: int) -> str:
    """The operation a statement's value comes from: its own, or for a call of a returned callable,
    the origin of that callable (`cached` for `cached(cache)(func)(1)`)."""
    root, _ = _chain(statements, index)
    return statements[root]["op"]



def call_path(statements: Statements, index: int) -> str:
    """The origin with a `()` per call of a returned callable that led to the statement
    (`pkg.mod:cached()()` for `cached(cache)(func)(1)`): differences of a decorator and of the
    wrapper it returns are told apart."""
    root, calls = _chain(statements, index)
    return statements[root]["op"] + "()" * calls



def called(statement: dict) -> int | None:
    """The statement whose value `statement` calls, if it calls a returned callable."""
    if statement["op"] != CALL or not statement["args"]:
        return None
    return statement["args"][0].get("ref")



def _chain(statements: Statements, index: int) -> tuple[int, int]:
    """The statement whose value a chain of calls of returned callables starts from, and the calls."""
    calls = 0
    while (callee := called(statements[index])) is not None:
        index, calls = callee, calls + 1
    return index, calls
