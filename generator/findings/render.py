"""Pytest source for a difference: the call sequence, then one check of one commit's behaviour.

A rendered test *pins* one side of a mismatch:

- `pin="base"` asserts the base leaf: it passes on base and fails on head (a regression test
  that keeps the old behaviour); the head value is in the assertion message or a comment;
- `pin="head"` asserts the head leaf: it passes on head and fails on base (a test of the new
  behaviour); the base value is in the message or comment.

The checked expression is read back from the observation key (`3/0:total` is `meter.total`
after statement 3). The test ends in exactly one behaviour: an `assert`, a
`with pytest.raises(Exc, match=...)` block when the pinned side raises, or the bare call when
the pinned side returns normally where the other raised. Floats are compared with
`pytest.approx(value, rel=..., abs=...)` by the run's float policy (by default the engine's
1e-09 and 1e-12), NaN with `math.isnan`, infinities exactly; how each leaf is checked is the
oracle's (`oracle.checks`).

Some leaves cannot be pinned (`can_pin` says which): a hang, timeout or crash on the pinned
side, a value with no assertable form (an unstable observer, a cycle, an `str()` that was cut
short), an observation missing on the pinned side that no `hasattr` can express, an
operation missing on the pinned side (its import fails), and a check that would hold on the
other side too. `render_test` raises `Unpinnable` (a ValueError) for them.

Every module is formatted with black (line length 100); the names come from `naming`.
"""

from __future__ import annotations

import inspect
import keyword
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..changes.model import ChangeSet
from ..oracle.checks import Unpinnable, check, raises
from ..oracle.compare import Mismatch, kind_of
from ..oracle.entries import table_entries
from ..oracle.leaves import EXACT_ENOUGH, FloatPolicy, describe, is_lost, is_raised, leaf_text
from ..report.model import Difference, InputOrigin, Statement, TableEntry
from ..runtime.catalog import Operation
from ..runtime.sequence import CallSequence, called, references
from ..worker.asynchronous import DRAINED_ITEMS, drained
from ..worker.command_line import command_target, run_command_line
from ..worker.literals import SHARED_NAN, input_files, modules_used
from ..worker.literals import source as literal_source
from ..worker.protocol import ApiChange, ObservationKey, OperationKind, Step, Tag, value_key
from ..worker.resolve import (
    ARITHMETIC,
    CALL,
    COMPARISONS,
    export_target,
    setter_target,
    subclass_name,
    subclass_target,
    volume_target,
)
from ..worker.volume import INDEX, varied_source, varied_tag
from .cases import Finding
from .declared_types import outside_declared_types
from .naming import BUILTIN_NAMES, Names, test_name, variable_name

__all__ = ["UNPINNABLE", "Pin", "Unpinnable", "can_pin", "import_difference", "render_findings",
           "render_test", "test_name"]

Pin = Literal["base", "head"]
UNPINNABLE = "# base's behaviour here cannot be asserted by a test (a hang, a crash, or no stable value)\n"
BINARY = {f"__{name}__": symbol
          for name, symbol in {**COMPARISONS, **ARITHMETIC, "and": "&", "or": "|", "xor": "^"}.items()}
UNARY = {"__neg__": "-{0}", "__abs__": "abs({0})", "__int__": "int({0})", "__float__": "float({0})",
         "__len__": "len({0})", "__iter__": "list({0})", "__str__": "str({0})", "__repr__": "repr({0})",
         "__bool__": "bool({0})", "__hash__": "hash({0})", "__reversed__": "list(reversed({0}))"}
WRAPPERS = {"len": "len({})", "list": "list(iter({}))", "str": "str({})", "repr": "repr({})"}
HELPER_MODULES = ("asyncio", "copy", "datetime", "decimal", "fractions", "hashlib", "io", "itertools", "math",
                  "pathlib", "pytest", "re")
# Protocol operations (the worker resolver's PROTOCOLS) written as the syntax that calls them.
PROTOCOL_SOURCE = {
    **{f"operator:{form}": f"{{0}} {symbol} {{1}}" for name, symbol in {**ARITHMETIC, **COMPARISONS}.items()
       for form in (name, f"__{name}__")},
    "operator:contains": "{1} in {0}", "builtins:hash": "hash({0})", "builtins:len": "len({0})",
    "builtins:bool": "bool({0})", "builtins:list": "list({0})", "builtins:format": "format({0}, {1})",
    "copy:copy": "copy.copy({0})", "copy:deepcopy": "copy.deepcopy({0})",
}
FIXTURES = ("monkeypatch", "tmp_path")  # the test takes them when a call reads an input file
# A test of a command line carries the function the worker ran it with, so it runs it the same way.
COMMAND_LINE_HELPER = inspect.getsource(run_command_line)
DRAIN_HELPER = inspect.getsource(drained).replace("DRAINED_ITEMS", str(DRAINED_ITEMS))
RESERVED = frozenset({*HELPER_MODULES, *FIXTURES, "excinfo", run_command_line.__name__, drained.__name__,
                      INDEX})  # a volume call's loop variable
LINE_LENGTH = 100
NOTE_LIMIT = 200




# ---------------------------------------------------------------- the stage: findings to differences


SUBCLASS_SOURCE = 'class {name}({base}):\n    """A subclass with nothing of its own, as a user\'s."""\n'


def render_findings(findings: list[Finding], operations: dict[str, Operation],
                    floats: FloatPolicy = EXACT_ENOUGH, classes: Mapping[str, dict] | None = None
                    ) -> list[Difference]:
    """Each finding as a reported difference with its two tests (`pin_base`, `pin_head`);
    `classes`, the catalog's, tell the objects' types (`declared_types`)."""
    return [_difference(finding, operations, floats, classes) for finding in findings]


def severity(mismatch: Mismatch) -> str:
    """"minor" when only the message of an exception differs and the project's own code did not
    produce it on either commit: the interpreter (`len(None)` in the project's code: CPython's
    wording), the standard library or a dependency raised it, as the worker saw. Whatever the
    project's code raises (any `raise`, `assert`, an exit), of any class, is never minor."""
    base, head = mismatch.base, mismatch.head
    if not (base and head and base[0] == head[0] == Tag.RAISED and len(base) > 3 and len(head) > 3):
        return "major"
    same_class = base[1] == head[1] and base[3] == head[3]
    raised_outside = base[4:5] == head[4:5] == ["outside"]
    return "minor" if same_class and raised_outside and base[2] != head[2] else "major"


def _difference(finding: Finding, operations: dict[str, Operation], floats: FloatPolicy,
                classes: Mapping[str, dict] | None = None) -> Difference:
    mismatch, target = finding.shown.mismatch, finding.shown.target
    kind = kind_of(mismatch)
    statements = list(finding.case.statements)
    tests = {pin: render_test(statements, operations, mismatch, test_name(target, kind, pin), pin=pin,
                              floats=floats) if can_pin(mismatch, pin) else None for pin in ("base", "head")}
    location = finding.location
    return Difference(
        id="", kind=kind, target=target, path=location.path, line=location.line, side=location.side,
        base=leaf_text(mismatch.base, mismatch.head), head=leaf_text(mismatch.head, mismatch.base),
        test=tests["base"] or UNPINNABLE, key=mismatch.key,
        statements=[Statement.from_json(s) for s in statements], count=finding.count,
        pin_head=tests["head"], minimized=finding.minimized, severity=severity(mismatch),
        origin=input_origin(finding, operations, classes), carved_by=sorted(finding.carved_by),
        direct=any(op.direct for s in statements if (op := operations.get(s["op"])) is not None),
        entries=_table_entries(finding, operations))


def _table_entries(finding: Finding, operations: dict[str, Operation]) -> list[TableEntry]:
    """When the difference is in a module's table read whole, the entries of it that differ."""
    operation = operations.get(finding.shown.target)
    key = ObservationKey.parse(finding.shown.mismatch.key)
    if operation is None or operation.kind != OperationKind.VALUE or key.is_exception:
        return []
    root = value_key(key.statement, key.variable)
    return table_entries(finding.shown.base.observations, finding.shown.head.observations, root)


def input_origin(finding: Finding, operations: dict[str, Operation],
                 classes: Mapping[str, dict] | None = None) -> InputOrigin:
    """Carved when the case was cut from a project test's calls, else whether its input keeps
    within its operations' declared types."""
    if finding.carved:
        return InputOrigin.CARVED
    outside = outside_declared_types(list(finding.case.statements), operations, classes)
    return InputOrigin.WITHIN_DECLARED_TYPES if outside is None else InputOrigin.OUTSIDE_DECLARED_TYPES


def import_difference(module: str, error: str, changes: ChangeSet) -> Difference:
    """A changed module that imports on base and not on head: its test is the import."""
    path = next((f.head_path for f in changes.files if f.module == module), None)
    test = f"def test_import_{_slug(module)}():\n    import {module}  # head: {error}\n"
    return Difference(id="", kind="exception", target=f"{module}:<module>", path=path, line=1, side="head",
                      base="imports", head=f"raises {error}", test=test, key="import")


def _slug(target: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in target.replace(":", "_")).strip("_").lower()[:60]


@dataclass
class _Imports:
    """What a test's body needs from outside: imports, input files, and the float tolerance."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)
    modules: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)  # input files the calls read: name -> text
    floats: FloatPolicy = EXACT_ENOUGH  # the tolerance of `pytest.approx` checks
    command_line: bool = False  # a call runs a command line: the test defines COMMAND_LINE_HELPER
    asynchronous: bool = False  # a call drains an asynchronous generator: the test defines DRAIN_HELPER
    nan: str | None = None  # the variable of the sequence's one NaN argument, when it is passed twice
    subclasses: dict[str, str] = field(default_factory=dict)  # the test's subclasses: name -> base's name

    def name_for(self, module: str, name: str) -> str:
        if self.names.get(name, (module, name)) == (module, name) and name not in RESERVED | BUILTIN_NAMES:
            self.names[name] = (module, name)
            return name
        self.modules.add(module)  # clash (or a builtin's name): fall back to the qualified form
        return f"{module}.{name}"

    def bound(self) -> set[str]:
        """Every name the import lines bind in the test module."""
        return set(self.names) | {m.split(".")[0] for m in self.modules} | set(self.subclasses)

    def lines(self) -> list[str]:
        """Standard library, then pytest, then the project; one `from` line per module."""
        groups: list[list[str]] = [[], [], []]
        for module in sorted(self.modules):
            groups[_group(module)].append(f"import {module}")
        by_module: dict[str, list[str]] = {}
        for module, name in self.names.values():
            by_module.setdefault(module, []).append(name)
        for module in sorted(by_module):
            groups[_group(module)].append(f"from {module} import {', '.join(sorted(by_module[module]))}")
        return [line for group in groups if group for line in [*group, ""]][:-1]


def _group(module: str) -> int:
    top = module.split(".")[0]
    if top == "pytest":
        return 1
    return 0 if top in sys.stdlib_module_names else 2


def can_pin(mismatch: Mismatch, pin: Pin = "base") -> bool:
    """True if `render_test(..., pin=pin)` can render a test that holds on the pinned side."""
    try:
        _final("f()", {}, mismatch, pin, _Imports())
    except Unpinnable:
        return False
    return True


def render_test(statements: CallSequence, operations: dict[str, Operation], mismatch: Mismatch,
                test_name: str, *, pin: Pin = "base", floats: FloatPolicy = EXACT_ENOUGH) -> str:
    """A self-contained pytest module that passes on the `pin` side and fails on the other.

    Raises Unpinnable (a ValueError) when `can_pin(mismatch, pin)` is False.
    """
    if pin not in ("base", "head"):
        raise ValueError(f"pin must be 'base' or 'head', not {pin!r}")
    last = ObservationKey.parse(mismatch.key).statement
    statements = statements[: last + 1]
    needed = _referenced(statements, mismatch)
    probe = _Imports(floats=floats)  # first pass: which names the imports bind, so no variable shadows one
    _body(statements, operations, mismatch, pin, _variable_names(statements, operations, needed, ()), probe)
    reserved = probe.bound() | RESERVED | {test_name}
    nan = Names(reserved).fresh("nan") if _shared_nans(statements) > 1 else None
    names = _variable_names(statements, operations, needed, reserved | {nan} if nan else reserved)
    imports = _Imports(floats=floats, nan=nan)
    body = _body(statements, operations, mismatch, pin, names, imports)
    if nan:  # the worker passes one NaN object to every call given one (SHARED_NAN): so does the test
        body.insert(0, f'{nan} = float("nan")')
    header = imports.lines()
    if imports.command_line or imports.asynchronous:  # the helpers' annotations stay unevaluated
        header = ["from __future__ import annotations", "", *header]
    parameters = ", ".join(FIXTURES) if imports.files else ""
    helper = "".join(source + "\n\n" for source, used in ((COMMAND_LINE_HELPER, imports.command_line),
                                                        (DRAIN_HELPER, imports.asynchronous)) if used)
    helper += "".join(SUBCLASS_SOURCE.format(name=name, base=base) + "\n\n"
                      for name, base in sorted(imports.subclasses.items()))
    source = ("\n".join(header) + ("\n\n\n" if header else "") + helper
              + f"def {test_name}({parameters}):\n")
    return _format(source + "".join(f"    {line}\n" for line in [*_input_files(imports.files), *body]))


def _input_files(files: dict[str, str]) -> list[str]:
    """Lines that write the input files in a fresh folder, the test's working directory, as
    the worker wrote them in its own (so relative paths read the same)."""
    if not files:
        return []
    lines = ["monkeypatch.chdir(tmp_path)"]
    for name, text in sorted(files.items()):
        errors = "" if text.isascii() else ', errors="surrogatepass"'
        lines.append(f'pathlib.Path({name!r}).write_text({text!r}, encoding="utf-8"{errors})')
    return lines


def _format(source: str) -> str:
    import black  # imported on first use: it takes a while, and only rendering needs it

    return black.format_str(source, mode=black.Mode(line_length=LINE_LENGTH))


def _body(statements: CallSequence, operations: dict[str, Operation], mismatch: Mismatch, pin: Pin,
          names: dict[int, str], imports: _Imports) -> list[str]:
    last = len(statements) - 1
    as_value = ObservationKey.parse(mismatch.key).observes_result
    body: list[str] = []
    for index, statement in enumerate(statements):
        # an assignment's value is what it returns (None) where the test uses it
        value = (as_value and index == last) or index in names
        call = _call_source(statement, operations, names, imports, value)
        if index == last:
            body.extend(_final(call, names, mismatch, pin, imports))
        elif index in names:
            body.append(f"{names[index]} = {call}")
        else:
            body.append(call)
    return body


def _referenced(statements: CallSequence, mismatch: Mismatch) -> set[int]:
    refs = {ref for statement in statements for ref in references(statement)}
    var = ObservationKey.parse(mismatch.key).variable
    if var is not None:
        refs.add(var)
    return {r for r in refs if r < len(statements)}


def _variable_names(statements: CallSequence, operations: dict[str, Operation], needed: set[int],
                    reserved: set[str] | tuple) -> dict[int, str]:
    names = Names(reserved)
    ops = [s["op"] for s in statements]
    functions = {called(s) for s in statements}  # values called later: returned callables
    return {i: names.fresh("function" if i in functions else variable_name(ops[i], operations.get(ops[i])))
            for i in sorted(needed)}


def _shared_nans(statements: CallSequence) -> int:
    """How many arguments are the sequence's shared NaN."""
    return sum(arg.get("lit") == SHARED_NAN
               for statement in statements for arg in (*statement["args"], *statement["kwargs"].values()))


def _arg_source(arg: dict, names: dict[int, str], imports: _Imports, vary: bool = False) -> str:
    """`vary`: a volume call's argument, distinct in each of its calls (`volume.varied_source`)."""
    if "ref" in arg:
        return names[arg["ref"]]
    if imports.nan and arg["lit"] == SHARED_NAN:
        return imports.nan
    imports.modules |= modules_used(arg["lit"])
    imports.files.update(input_files(arg["lit"]))
    source = literal_source(arg["lit"])
    return varied_source(varied_tag(arg), source) if vary else source


def _call_source(statement: Statement, operations: dict[str, Operation], names: dict[int, str],
                 imports: _Imports, as_value: bool = False, vary: bool = False) -> str:
    """Source of a statement's call, awaited or drained as the worker does (`asynchronous`);
    `as_value`: an expression even for `x[k] = v` and `del x[k]`. A volume call is a list of its
    calls, its last the value: `[cache.put("k" + str(i), 1 + i) for i in range(257)][-1]`."""
    repeated = volume_target(statement["op"])
    if repeated is not None:
        inner = _call_source({**statement, "op": repeated[0]}, operations, names, imports, True, True)
        return f"[{inner} for {INDEX} in range({repeated[1]})][-1]"
    call = _plain_call_source(statement, operations, names, imports, as_value, vary)
    op = operations.get(statement["op"])
    if op is None or not op.awaits:
        return call
    imports.modules.add("asyncio")
    if op.awaits == "asyncgen":
        imports.asynchronous = True
        return f"asyncio.run({drained.__name__}({call}))"
    return f"asyncio.run({call})"


def _plain_call_source(statement: Statement, operations: dict[str, Operation], names: dict[int, str],
                       imports: _Imports, as_value: bool = False, vary: bool = False) -> str:
    op_id = statement["op"]
    op = operations.get(op_id)
    module, _, qualname = op_id.partition(":")
    args = [_arg_source(a, names, imports, vary) for a in statement["args"]]
    kwargs = [f"{k}={_arg_source(a, names, imports, vary)}" for k, a in statement["kwargs"].items()]
    if op_id == CALL:  # a callable an earlier statement returned, called
        return f"{args[0]}({', '.join([*args[1:], *kwargs])})"
    kind = op.kind if op else (OperationKind.METHOD if "." in qualname else OperationKind.FUNCTION)
    settable = setter_target(op_id)
    if settable is not None and len(args) == 2 and not kwargs:  # an attribute set, as a user sets it
        attribute = settable[1]
        if as_value:
            return f"setattr({args[0]}, {attribute!r}, {args[1]})"
        return f"{args[0]}.{attribute} = {args[1]}"
    if kind == OperationKind.METHOD:
        receiver, rest = args[0], args[1:]
        method = qualname.rsplit(".", 1)[-1]
        if method in BINARY and len(rest) == 1 and not kwargs:
            return f"{receiver} {BINARY[method]} {rest[0]}"
        if method in UNARY and not rest and not kwargs:
            return UNARY[method].format(receiver)
        if method == "__getitem__" and len(rest) == 1:
            return f"{receiver}[{rest[0]}]"
        if method in ("__setitem__", "__delitem__") and as_value:
            return f"{receiver}.{method}({', '.join([*rest, *kwargs])})"
        if method == "__setitem__" and len(rest) == 2:
            return f"{receiver}[{rest[0]}] = {rest[1]}"
        if method == "__delitem__" and len(rest) == 1:
            return f"del {receiver}[{rest[0]}]"
        if method == "__contains__" and len(rest) == 1:
            return f"{rest[0]} in {receiver}"
        return f"{receiver}.{method}({', '.join([*rest, *kwargs])})"
    if kind == OperationKind.VALUE:  # a module's (or a class's) constant or table, read
        return _callable_name(module, qualname, imports)
    if kind == OperationKind.EXPORT:  # an exported name, looked up in the test's body (not its imports)
        imports.modules.add(module)
        return f"{module}.{export_target(op_id).partition(':')[2]}"
    if kind == OperationKind.COMMAND:  # an entry point run as its command line, by the test's helper
        imports.command_line = True
        main = _callable_name(*(command_target(op_id) or op_id).split(":", 1), imports)
        return f"{run_command_line.__name__}({', '.join([main, *args, *kwargs])})"
    if op_id in PROTOCOL_SOURCE and not kwargs:
        if module == "copy":
            imports.modules.add("copy")
        return PROTOCOL_SOURCE[op_id].format(*args)
    subclassed = subclass_target(op_id)
    if subclassed is not None:  # the class's subclass with nothing of its own, defined by the test
        base_module, _, base_qualname = subclassed.partition(":")
        name = subclass_name(base_qualname.rsplit(".", 1)[-1])
        imports.subclasses[name] = _callable_name(base_module, base_qualname, imports)
        return f"{name}({', '.join([*args, *kwargs])})"
    return f"{_callable_name(module, qualname, imports)}({', '.join([*args, *kwargs])})"


def _callable_name(module: str, qualname: str, imports: _Imports) -> str:
    """How the test names `module:qualname`: its top-level name imported, then attributes."""
    top = qualname.split(".", 1)[0]
    return imports.name_for(module, top) + qualname[len(top):]


# ---------------------------------------------------------------- the final statement and its check


def _final(call: str, names: dict[int, str], mismatch: Mismatch, pin: Pin, imports: _Imports) -> list[str]:
    """The last statement and the one behaviour it pins: lines of the test body."""
    pinned, other = (mismatch.base, mismatch.head) if pin == "base" else (mismatch.head, mismatch.base)
    note = _comment_text(f"{'head' if pin == 'base' else 'base'}: {describe(other, pinned)}")
    if is_lost(pinned):
        raise Unpinnable(f"the call does not end on {pin}: {leaf_text(pinned)}")
    key = ObservationKey.parse(mismatch.key)
    if key.is_exception:
        if pinned is None:  # returns normally here, raises there: the call alone must not raise
            return [f"# {note}", call]
        if pinned[0] == Tag.API:
            if pinned[1] != ApiChange.SIGNATURE:
                raise Unpinnable(f"the operation is missing on {pin}: {pinned[2]}")
            imports.modules.add("pytest")
            return [f"# {note}", "with pytest.raises(TypeError):", f"    {call}"]
        if pinned[0] != Tag.RAISED or len(pinned) < 3:
            raise Unpinnable(f"not an exception: {pinned}")
        return [f"# {note}", *raises(pinned, other, call, imports)]
    value_name = names.get(key.variable, "result")  # type: ignore[arg-type]
    if mismatch.raised is not None and not key.observes_result:  # what the failed call left behind
        prefix = raises(mismatch.raised, None, call, imports)
    else:
        prefix = [f"{value_name} = {call}"] if key.observes_result else [call]
    expression, owner = _expression(value_name, key.steps)
    last = key.steps[-1] if key.steps else None
    if pinned is None:
        return [*prefix, _absent(owner, last, note)]
    if pinned[0] == Tag.RAISED:
        return [*prefix, f"# {note}", *raises(pinned, other, expression, imports)]
    checked = check(expression, pinned, other, last, imports)
    if checked == _other_check(expression, other, pinned, last, imports.floats):
        raise Unpinnable(f"the check {checked!r} holds on both sides")
    if other is None and last is not None and last.kind in ("attr", "property", "call"):
        checked = f"hasattr({owner}, {last.text!r}) and {checked}"  # absent on the other side
    return [*prefix, f"assert {checked}, {note!r}"]


def _other_check(x: str, other: list | None, pinned: list, last: Step | None,
                 floats: FloatPolicy) -> str | None:
    """The check the other side's leaf would get (None if it has none)."""
    if other is None or is_raised(other):
        return None
    try:
        return check(x, other, pinned, last, _Imports(floats=floats))
    except Unpinnable:
        return None




def _comment_text(text: str) -> str:
    """One printable line (no newline can end a comment early), at most NOTE_LIMIT characters."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= NOTE_LIMIT else text[: NOTE_LIMIT - 3] + "..."


def _expression(name: str, tokens: tuple[Step, ...]) -> tuple[str, str]:
    """Python source over `name` for a key's tokens (`.a:b[0]@len`), and that of its owner."""
    expression = owner = name
    for token in tokens:
        owner = expression
        if token.kind == "wrap":
            expression = WRAPPERS[token.text].format(expression)
        elif token.kind == "call":
            expression = _attribute(expression, token.text) + "()"
        elif token.kind == "item":
            expression += f"[{token.text}]"
        else:
            expression = _attribute(expression, token.text)
    return expression, owner


def _attribute(owner: str, name: str) -> str:
    """`owner.name`, or `getattr(owner, ' .encoding')` for a name no attribute reference spells
    (set with setattr or through `__dict__`; non-ASCII names too, which Python would normalize)."""
    if name.isascii() and name.isidentifier() and not keyword.iskeyword(name):
        return f"{owner}.{name}"
    return f"getattr({owner}, {name!r})"


def _absent(owner: str, last: Step | None, note: str) -> str:
    """The pinned side has no such observation: only an attribute's absence can be asserted."""
    if last is None or last.kind not in ("attr", "property", "call"):
        raise Unpinnable("the pinned side lacks an observation that no hasattr() can express")
    return f"assert not hasattr({owner}, {last.text!r}), {note!r}"


























