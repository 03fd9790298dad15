"""The host's view of the catalog the base worker discovered, and where the PR points it.

Operations whose code the PR changed (or that reach a changed private helper by name,
transitively within the module) are the *focus*: chosen most often. Everything else in
the catalog stays available as an argument builder.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .model import ChangeSet

IMPACT_DEPTH = 3


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # inspect.Parameter kind name
    has_default: bool
    hints: tuple[str, ...]
    choices: tuple[tuple, ...] = ()
    default_is_none: bool = False
    hints_from: str = ""  # "" (annotation), "docstring", "default", "isinstance" or "dispatch"

    @staticmethod
    def from_json(data: dict) -> Parameter:
        return Parameter(data["name"], data["kind"], data["has_default"], tuple(data.get("hints", ())),
                         tuple(tuple(c) for c in data.get("choices", ())), data.get("default") == ["none"],
                         data.get("hints_from", ""))


@dataclass(frozen=True)
class Operation:
    id: str
    kind: str  # function | constructor | method | static
    owner: str | None  # type name of the class, for constructors and methods
    params: tuple[Parameter, ...]
    returns: tuple[str, ...]
    file: str | None
    line: int | None

    @property
    def module(self) -> str:
        return self.id.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.id.partition(":")[2]

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @staticmethod
    def from_json(data: dict) -> Operation:
        return Operation(data["id"], data["kind"], data.get("owner"),
                         tuple(Parameter.from_json(p) for p in data["params"]),
                         tuple(data.get("returns", ())), data.get("file"), data.get("line"))


@dataclass
class Catalog:
    operations: list[Operation]
    classes: dict[str, dict]  # type name -> {"mro": [...], "abstract": bool}
    import_errors: dict[str, str]  # changed module -> why it does not import on base
    focus: set[str] = field(default_factory=set)  # operation ids the PR changed or reaches
    head_import_errors: dict[str, str] = field(default_factory=dict)  # the same, on head

    @staticmethod
    def from_json(data: dict, head: dict | None = None) -> Catalog:
        """The catalog a base worker listed; `head`, the head worker's, for its import errors."""
        return Catalog([Operation.from_json(o) for o in data["operations"]], data["classes"],
                       data.get("import_errors", {}),
                       head_import_errors=(head or {}).get("import_errors", {}))

    @property
    def by_id(self) -> dict[str, Operation]:
        return {op.id: op for op in self.operations}

    def broken_on_head(self) -> dict[str, str]:
        """The changed modules that import on base and not on head, with head's error."""
        return {m: e for m, e in self.head_import_errors.items() if m not in self.import_errors}

    def importable_on_both(self, modules: tuple[str, ...]) -> set[str]:
        return set(modules) - set(self.head_import_errors) - set(self.import_errors)

    def constructors_of(self, type_name: str) -> list[Operation]:
        return [op for op in self.operations if op.kind == "constructor" and op.owner == type_name]


def focus_operations(catalog: Catalog, changes: ChangeSet, sources: dict[str, str]) -> set[str]:
    """Operation ids whose unit changed, plus those that call a changed unit by name.

    `sources` maps module name -> base source text, used to find callers of changed private
    helpers (a change to `_unit_seconds` is tested through `parse_duration`).
    """
    changed = {(u.module, u.qualname) for u in changes.units if u.kind in ("function", "method")}
    changed_classes = {(u.module, u.qualname) for u in changes.units if u.kind == "class"}
    calls = {module: _called_names(source) for module, source in sources.items()}
    reached_by = {unit: {unit} | _callers(unit[0], calls.get(unit[0], {}), {unit[1]}) for unit in changed}
    reached = set().union(*reached_by.values())
    whole_modules = changed_at_import(changes, sources) | _unreached_modules(catalog, reached_by)
    focus: set[str] = set()
    for op in catalog.operations:
        key = (op.module, op.qualname)
        owner = (op.module, op.qualname.rsplit(".", 1)[0]) if "." in op.qualname else None
        if key in reached or owner in changed_classes or op.module in whole_modules:
            focus.add(op.id)
        elif op.kind == "constructor" and any(m == op.module and q.startswith(op.qualname + ".")
                                              for m, q in changed):
            focus.add(op.id)  # building the object is the first step towards its changed methods
    return focus


def operations_reaching(catalog: Catalog, changes: ChangeSet, sources: dict[str, str],
                        units: set[tuple[str, str]]) -> dict[tuple[str, str], set[str]]:
    """For each (module, qualname) unit, the catalogued operations through which tests reach it.

    A function or method: itself and its callers by name within the module (transitively);
    a class: its operations; module-level code, or any unit of a module whose changes reach
    every operation (changed at import, or by no known caller): every operation of the
    module. A unit no operation reaches maps to an empty set.
    """
    calls = {module: _called_names(source) for module, source in sources.items()}
    by_key: dict[tuple[str, str], set[str]] = {}
    for op in catalog.operations:
        by_key.setdefault((op.module, op.qualname), set()).add(op.id)
    changed = {(u.module, u.qualname) for u in changes.units if u.kind in ("function", "method")}
    reached_by = {unit: {unit} | _callers(unit[0], calls.get(unit[0], {}), {unit[1]}) for unit in changed}
    whole_modules = changed_at_import(changes, sources) | _unreached_modules(catalog, reached_by)
    kinds = {(u.module, u.qualname): u.kind for u in changes.units}
    found: dict[tuple[str, str], set[str]] = {}
    for module, qualname in units:
        unit = (module, qualname)
        if kinds.get(unit) == "module" or (module in whole_modules and unit in kinds):
            found[unit] = {op.id for op in catalog.operations if op.module == module}
            continue
        reached = reached_by.get(unit, {unit})
        ops = set().union(*(by_key.get(key, set()) for key in reached))
        ops |= {op.id for op in catalog.operations
                if op.module == module and op.qualname.startswith(qualname + ".")}  # a class's operations
        found[unit] = ops
    return found


def impacted_units(changes: ChangeSet, sources: dict[str, str]) -> set[tuple[str, str]]:
    """(module, qualname) of the units a change reaches without changing them: its tier 2.

    The public functions and methods that call a changed function or method by name within
    its module (transitively, `IMPACT_DEPTH` calls deep, through private helpers too), and
    the public classes whose methods changed. Changed units themselves are left out.
    Statically, from `sources` (module -> base source text): no worker, no catalog.
    """
    changed = {(u.module, u.qualname) for u in changes.units}
    found: set[tuple[str, str]] = set()
    for module, source in sources.items():
        names = {q for m, q in changed if m == module}
        found |= _callers(module, _called_names(source), names)
    found |= {(u.module, u.qualname.rsplit(".", 1)[0]) for u in changes.units
              if u.kind == "method" and "." in u.qualname}
    return {unit for unit in found - changed if _is_public(unit[1])}


def _is_public(qualname: str) -> bool:
    """No part of the dotted name is private; dunders (`__init__`, `__lt__`) are public."""
    return all(not part.startswith("_") or (part.startswith("__") and part.endswith("__"))
               for part in qualname.split("."))


def _unreached_modules(catalog: Catalog, reached_by: dict[tuple[str, str], set[tuple[str, str]]]) -> set[str]:
    """Modules with a changed unit that no catalogued operation is known to reach.

    A method of a private helper class (`_Timer.__enter__`) is only ever reached through
    other classes; not knowing which, every operation of the module becomes a target.
    """
    operations = {(op.module, op.qualname) for op in catalog.operations}
    owners = {(op.module, op.qualname.rsplit(".", 1)[0]) for op in catalog.operations if "." in op.qualname}
    return {unit[0] for unit, reached in reached_by.items()
            if not reached & operations and (unit[0], unit[1].rsplit(".", 1)[0]) not in owners}


def changed_at_import(changes: ChangeSet, sources: dict[str, str]) -> set[str]:
    """Modules whose changed functions run at import time (they fill module-level tables).

    Such a change reaches every function that reads those tables without ever calling the
    changed one, so the whole module is the target and every sequence must be replayed.
    """
    found = set()
    for module, source in sources.items():
        names = {u.qualname.rsplit(".", 1)[-1] for u in changes.units
                 if u.module == module and u.kind in ("function", "method")}
        if names and names & _import_time_calls(source):
            found.add(module)
    return found


def _import_time_calls(source: str) -> set[str]:
    """Names called by module-level and class-body statements (not inside function bodies)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    called: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # `@deco` calls deco at import, though no Call node says so
            called.update(d.id if isinstance(d, ast.Name) else d.attr for d in node.decorator_list
                          if isinstance(d, (ast.Name, ast.Attribute)))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # the body runs later; decorators and defaults run now
            pending.extend([*node.decorator_list, *node.args.defaults, *filter(None, node.args.kw_defaults)])
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called.add(node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
        pending.extend(ast.iter_child_nodes(node))
    return called


def _callers(module: str, calls: dict[str, set[str]], changed: set[str]) -> set[tuple[str, str]]:
    """Units of `module` that call one of `changed` (by last name component), transitively.

    `calls`: qualname -> names it calls, from `_called_names`.
    """
    reached_names = {q.rsplit(".", 1)[-1] for q in changed}
    found: set[tuple[str, str]] = set()
    for _ in range(IMPACT_DEPTH):
        new = {q for q, names in calls.items() if names & reached_names} - {q for _, q in found}
        if not new:
            break
        found |= {(module, q) for q in new}
        reached_names |= {q.rsplit(".", 1)[-1] for q in new}
    return found


def _called_names(source: str) -> dict[str, set[str]]:
    """qualname -> names called in its body, for top-level functions and methods.

    Syntax that calls dunder methods counts as calling them: `with` calls `__enter__`, a
    subscript `__getitem__`, `in` `__contains__`, `<` `__lt__`, a `for` loop `__iter__`.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    result: dict[str, set[str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                result[prefix + child.name] = {name for n in ast.walk(child) for name in _names_called_by(n)}

    visit(tree, "")
    return result


_OPERATOR_DUNDERS = {
    ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__", ast.Eq: "__eq__",
    ast.NotEq: "__ne__", ast.In: "__contains__", ast.NotIn: "__contains__", ast.Add: "__add__",
    ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__", ast.BitAnd: "__and__", ast.BitOr: "__or__", ast.BitXor: "__xor__",
}
_SUBSCRIPT_DUNDERS = {ast.Load: "__getitem__", ast.Store: "__setitem__", ast.Del: "__delitem__"}


def _names_called_by(node: ast.AST) -> tuple[str, ...]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return (node.func.id, f"__{node.func.id}__") if node.func.id in ("len", "iter", "repr", "str") \
            else (node.func.id,)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (node.func.attr,)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return ("__enter__", "__exit__")
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return ("__iter__", "__next__")
    if isinstance(node, ast.Subscript):
        return (_SUBSCRIPT_DUNDERS.get(type(node.ctx), "__getitem__"),)
    if isinstance(node, ast.Compare):
        return tuple(_OPERATOR_DUNDERS[type(op)] for op in node.ops if type(op) in _OPERATOR_DUNDERS)
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _OPERATOR_DUNDERS:
        return (_OPERATOR_DUNDERS[type(node.op)],)
    return ()


def read_sources(root: Path, changes: ChangeSet) -> dict[str, str]:
    """module -> base source text of the changed modules that exist on base."""
    sources = {}
    for change in changes.files:
        if change.module and change.base_path:
            path = root / change.base_path
            if path.exists():
                sources[change.module] = path.read_text(encoding="utf-8", errors="replace")
    return sources
