"""Input realism: whether a case passes a value its operation's declared types rule out.

A maintainer weighs a difference that only `f(None)` shows, for `f(text: str)`, far below one on
an input a caller could pass: such a difference is reported apart, as outside the declared types,
and fails nothing. Confirmation prefers a representative within the declared types, and the
minimizer never turns a case within them into one outside them (it replaces objects by None).

The rule is deliberately narrow, because the catalog's hints are the types the host can *build*
for a declaration (`Iterable[str]` is a list), not the declaration itself: only `None` is judged,
passed directly to a parameter whose annotation or docstring names types, none of them `None`,
and whose default is not `None`. Every other value counts as within the declared types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..runtime.catalog import Operation, Parameter
from ..worker.protocol import Arg, OperationKind, Statement
from ..worker.typeinfo import NONE

DECLARED = ("", "docstring")  # Parameter.hints_from of a declaration (annotation, docstring)
POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
BOUND = (OperationKind.FUNCTION, OperationKind.CONSTRUCTOR, OperationKind.METHOD, OperationKind.STATIC)


def outside_declared_types(statements: Sequence[Statement],
                           operations: Mapping[str, Operation]) -> str | None:
    """The first argument outside its parameter's declared types, said for a reader
    ("`None` for `text: str` of `pkg.mod:f`"); None when every argument is within them."""
    for statement in statements:
        op = operations.get(statement["op"])
        if op is None or op.kind not in BOUND:
            continue
        for param, arg in _bound(op, statement):
            if _is_none(arg) and not accepts_none(param):
                return f"`None` for `{param.name}: {_declared(param)}` of `{op.id}`"
    return None


def accepts_none(param: Parameter) -> bool:
    """Whether the declaration admits None (an undeclared or unconstrained parameter admits all)."""
    if param.hints_from not in DECLARED or not (param.hints or param.choices):
        return True
    return param.default_is_none or NONE in param.hints or ("none",) in param.choices


def _bound(op: Operation, statement: Statement) -> list[tuple[Parameter, Arg]]:
    """(parameter, argument) pairs, as Python binds them; the receiver of a method has none."""
    args = list(statement["args"][1:] if op.kind == OperationKind.METHOD else statement["args"])
    positional = [p for p in op.params if p.kind in POSITIONAL]
    rest = next((p for p in op.params if p.kind == "VAR_POSITIONAL"), None)
    pairs = list(zip(positional, args, strict=False))
    if rest is not None:
        pairs += [(rest, arg) for arg in args[len(positional):]]
    by_name = {p.name: p for p in op.params}
    pairs += [(by_name[name], arg) for name, arg in statement["kwargs"].items() if name in by_name]
    return pairs


def _is_none(arg: Arg) -> bool:
    return "lit" in arg and arg["lit"] == ["none"]


def _declared(param: Parameter) -> str:
    names = [hint.removeprefix("builtins.").removeprefix("?") for hint in param.hints]
    names += [repr(choice[-1]) for choice in param.choices if len(choice) > 1]
    return " | ".join(names)
