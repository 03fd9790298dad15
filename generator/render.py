"""Pytest source for a difference: the call sequence, then one assertion that holds on base.

The asserted expression is read back from the observation key (`3/0:total` is
`meter.total` after statement 3), the expected value from the base leaf, and the head
value goes into the assertion message, so the test passes on base and fails on head.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from .catalog import Operation
from .compare import Mismatch, leaf_text
from .keys import parse_key, tokenize
from .worker.literals import source as literal_source

BINARY = {"__eq__": "==", "__ne__": "!=", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=",
          "__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
          "__mod__": "%", "__and__": "&", "__or__": "|", "__xor__": "^"}
UNARY = {"__neg__": "-{0}", "__abs__": "abs({0})", "__int__": "int({0})", "__float__": "float({0})",
         "__len__": "len({0})", "__iter__": "list({0})", "__str__": "str({0})", "__repr__": "repr({0})",
         "__bool__": "bool({0})", "__hash__": "hash({0})"}
WRAPPERS = {"@len": "len({})", "@list": "list({})", "@str": "str({})", "@repr": "repr({})"}


@dataclass
class _Imports:
    names: dict[str, str] = field(default_factory=dict)  # local name -> "from m import n" line
    modules: set[str] = field(default_factory=set)

    def name_for(self, module: str, name: str) -> str:
        line = f"from {module} import {name}"
        if self.names.get(name, line) == line:
            self.names[name] = line
            return name
        self.modules.add(module)  # clash: fall back to the qualified form
        return f"{module}.{name}"

    def lines(self) -> list[str]:
        return sorted({f"import {m}" for m in self.modules}) + sorted(set(self.names.values()))


def render_test(statements: list[dict], operations: dict[str, Operation], mismatch: Mismatch,
                test_name: str) -> str:
    """A self-contained pytest module that passes on base and fails on head."""
    imports = _Imports()
    last = int(mismatch.key.split("/", 1)[0])
    statements = statements[: last + 1]
    needed = _referenced(statements, mismatch)
    names = _variable_names(statements, operations, needed)
    body: list[str] = []
    for index, statement in enumerate(statements):
        call = _call_source(statement, operations, names, imports)
        if index == last:
            body.extend(_assertion(index, call, names, mismatch, imports))
        elif index in needed:
            body.append(f"{names[index]} = {call}")
        else:
            body.append(call)
    header = imports.lines()
    source = "\n".join(header) + ("\n\n\n" if header else "") + f"def {test_name}():\n"
    return source + "".join(f"    {line}\n" for line in body)


def _referenced(statements: list[dict], mismatch: Mismatch) -> set[int]:
    refs = {a["ref"] for s in statements for a in (*s["args"], *s["kwargs"].values()) if "ref" in a}
    var = parse_key(mismatch.key).var
    if var is not None:
        refs.add(var)
    return refs


def _variable_names(statements: list[dict], operations: dict[str, Operation],
                    needed: set[int]) -> dict[int, str]:
    names: dict[int, str] = {}
    used: set[str] = set()
    for index in sorted(needed):
        if index >= len(statements):
            continue
        op = operations.get(statements[index]["op"])
        base = _snake(op.name if op and op.kind == "constructor" else "result")
        if keyword.iskeyword(base) or not base.isidentifier():
            base = "value"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        names[index] = name
    return names


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower().strip("_") or "value"


def _arg_source(arg: dict, names: dict[int, str], imports: _Imports) -> str:
    if "ref" in arg:
        return names.get(arg["ref"], f"<unnamed {arg['ref']}>")
    if _uses_tag(arg["lit"], "counter"):
        imports.modules.add("itertools")
    return literal_source(arg["lit"])


def _uses_tag(node: object, tag: str) -> bool:
    """True if a (nested) literal contains one tagged `tag`."""
    return isinstance(node, list) and (node[:1] == [tag] or any(_uses_tag(x, tag) for x in node))


def _call_source(statement: dict, operations: dict[str, Operation], names: dict[int, str],
                 imports: _Imports) -> str:
    op_id = statement["op"]
    op = operations.get(op_id)
    module, _, qualname = op_id.partition(":")
    args = [_arg_source(a, names, imports) for a in statement["args"]]
    kwargs = [f"{k}={_arg_source(a, names, imports)}" for k, a in statement["kwargs"].items()]
    kind = op.kind if op else ("method" if "." in qualname else "function")
    if kind == "method":
        receiver, rest = args[0], args[1:]
        method = qualname.rsplit(".", 1)[-1]
        if method in BINARY and len(rest) == 1 and not kwargs:
            return f"{receiver} {BINARY[method]} {rest[0]}"
        if method in UNARY and not rest and not kwargs:
            return UNARY[method].format(receiver)
        if method == "__getitem__" and len(rest) == 1:
            return f"{receiver}[{rest[0]}]"
        if method == "__setitem__" and len(rest) == 2:
            return f"{receiver}[{rest[0]}] = {rest[1]}"
        if method == "__delitem__" and len(rest) == 1:
            return f"del {receiver}[{rest[0]}]"
        if method == "__contains__" and len(rest) == 1:
            return f"{rest[0]} in {receiver}"
        return f"{receiver}.{method}({', '.join([*rest, *kwargs])})"
    top = qualname.split(".", 1)[0]
    callee = imports.name_for(module, top) + qualname[len(top):]
    return f"{callee}({', '.join([*args, *kwargs])})"


def _assertion(index: int, call: str, names: dict[int, str], mismatch: Mismatch,
               imports: _Imports) -> list[str]:
    base, head = mismatch.base, mismatch.head
    key = parse_key(mismatch.key)
    note = f"head: {leaf_text(head, base)}"
    is_statement = call.startswith("del ") or (" = " in call and "[" in call.split(" = ", 1)[0])
    if key.var is None:
        if base is not None and base[0] == "E":
            return [*_raises(base, imports, note), f"    {call}"]
        return [f"{call}  # {note}"]
    value_name = names.get(key.var, "result")
    prefix = [f"{value_name} = {call}"] if key.observes_result and not is_statement else [call]
    expression = _expression(value_name, key.suffix)
    if base is not None and base[0] == "E":
        return [*prefix, *_raises(base, imports, note), f"    {expression}"]
    return [*prefix, *_compare(expression, base, note, imports)]


def _expression(name: str, suffix: str) -> str:
    """Turn a key suffix (`.a:b[0]@len`) into Python source over `name`."""
    expression = name
    for token in tokenize(suffix):
        if token.kind == "wrap":
            expression = WRAPPERS["@" + token.text].format(expression)
        elif token.kind == "call":
            expression += f".{token.text}()"
        elif token.kind == "item":
            expression += f"[{token.text}]"
        else:
            expression += f".{token.text}"
    return expression


def _raises(leaf: list, imports: _Imports, note: str) -> list[str]:
    imports.modules.add("pytest")
    name, message = leaf[1], leaf[2]
    module = leaf[3] if len(leaf) > 3 else "builtins"
    exception = name if module == "builtins" else imports.name_for(module, name.split(".")[0]) + name[
        len(name.split(".")[0]):]
    if message and "0x?" not in message and not message.endswith("..."):
        return [f"with pytest.raises({exception}, match={('^' + re.escape(message) + '$')!r}):  # {note}"]
    return [f"with pytest.raises({exception}):  # {note}"]


def _compare(expression: str, base: list | None, note: str, imports: _Imports) -> list[str]:
    """An assertion that `expression` has the base leaf's value (message: the head value)."""
    message = repr(note)
    if base is None:
        if "." in expression:
            owner, attribute = expression.rsplit(".", 1)
            return [f"assert not hasattr({owner}, {attribute!r}), {message}"]
        return [f"{expression}  # {note}"]
    check = _check(expression, base, imports)
    if check is None:
        return [f"{expression}  # base: {leaf_text(base)}; {note}"]
    return [f"assert {check}, {message}"]


def _check(x: str, leaf: list, imports: _Imports) -> str | None:
    """A boolean expression true exactly when `x` matches the leaf, or None if none exists."""
    tag = leaf[0]
    if tag == "n":
        return f"{x} is None"
    if tag == "t":
        return f"{x} is {leaf[1]}"
    if tag in ("i", "s"):
        return f"{x} == {leaf[1]!r}"
    if tag == "b":
        return f"{x} == {bytes.fromhex(leaf[1])!r}"
    if tag == "f":
        return _float_check(x, float(leaf[1]), imports)
    if tag == "c":
        return f"{x} == complex({leaf[1]!r})"
    if tag == "i~":  # integer beyond 2**62: bit length and (deterministic) int hash
        return f"({x}.bit_length(), hash({x})) == ({leaf[1]}, {leaf[2]})"
    if tag in ("s~", "b~"):  # long text: length and digest
        imports.modules.add("hashlib")
        data = f"{x}.encode('utf-8', 'surrogatepass')" if tag == "s~" else x
        return f"(len({x}), hashlib.sha1({data}).hexdigest()[:16]) == ({leaf[1]}, {leaf[2]!r})"
    if tag == "T":
        return f"type({x}).__qualname__ == {leaf[1].rsplit('.', 1)[-1]!r}"
    if tag == "enum":
        return f"f'{{type({x}).__qualname__}}.{{{x}.name}}' == {leaf[1]!r}"
    if tag == "gen":
        return f"len(list({x})) == {leaf[1]}"
    if tag == "set":
        return _set_check(x, leaf)
    if len(leaf) >= 3 and isinstance(leaf[2], list):  # dict or mapping: size and keys in order
        if all(isinstance(k, list) for k in leaf[2]) and leaf[1] <= len(leaf[2]):
            return f"list({x}) == [{', '.join(literal_source(k) for k in leaf[2])}]"
        return f"len({x}) == {leaf[1]}"
    if tag in ("list", "tuple") or (len(leaf) == 2 and isinstance(leaf[1], int)):
        kind = f"isinstance({x}, {tag}) and " if tag in ("list", "tuple") else ""
        return f"{kind}len({x}) == {leaf[1]}"
    return None


def _float_check(x: str, value: float, imports: _Imports) -> str:
    if value != value:
        imports.modules.add("math")
        return f"math.isnan({x})"
    if value in (float("inf"), float("-inf")):
        return f"{x} == float({str(value)!r})"
    imports.modules.add("pytest")
    return f"{x} == pytest.approx({value!r}, rel=1e-09, abs=1e-12)"


def _set_check(x: str, leaf: list) -> str:
    items = leaf[2] if len(leaf) > 2 else None
    if isinstance(items, list) and all(isinstance(i, list) for i in items):
        return f"{x} == {literal_source(['set', items])}" if items else f"{x} == set()"
    return f"len({x}) == {leaf[1]}"
