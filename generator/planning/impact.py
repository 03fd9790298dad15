"""Impact: which code reaches the changed units, read from the changed modules' base sources once.

Static, nothing is imported. For each changed function or method, the units of its module that
call it by name (transitively, IMPACT_DEPTH calls deep, through private helpers too, and
through the syntax that calls dunders: `with` calls `__enter__`, `x[k]` `__getitem__`); the
units of the modules built on it that reach it through what they import (a changed pattern in
`pkg._tokenizer`'s rules table is read by `pkg._parser.parse`, which `pkg.items.Item` calls);
the modules whose changed functions run at import time (they fill tables every function
reads); the public units a change reaches without changing them (tier 2 of the plan); and
each module's public operations as its source defines them.

Questions about reach take a list of operations: the public operations of the source (for
the plan, made before anything is imported) or a worker's catalog (for aiming the explorer).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..changes.changed_lines import SIDES
from ..changes.importers import imported_names
from ..changes.model import ChangeSet, Checkout
from ..changes.syntax import parsed
from ..changes.units import MODULE, Span, parse_spans
from ..runtime.catalog import Operation
from ..worker.protocol import OperationKind
from ..worker.resolve import OPERATION_DUNDERS, setter_target

IMPACT_DEPTH = 3
UnitKey = tuple[str, str]  # (module, qualname)
NOT_OPERATIONS = frozenset({"property", "cached_property", "setter", "getter", "deleter"})
STATIC_DECORATORS = frozenset({"staticmethod", "classmethod"})
CONSTRUCTION = frozenset({"__new__", "__init__", "__post_init__"})  # what calling a class runs


@dataclass
class Impact:
    changes: ChangeSet
    sources: dict[str, str]  # module -> base source, for the changed modules that exist on base
    calls: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # module -> qualname -> names called
    calls_by_name: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # the same, tables left out
    reached_by: dict[UnitKey, set[UnitKey]] = field(default_factory=dict)  # changed function -> it, callers
    # changed function, method or module-level code -> units of other modules reaching it by import
    imported_by: dict[UnitKey, set[UnitKey]] = field(default_factory=dict)
    # changed class body -> the functions of its module reading what it binds (`self.timeframes`), callers
    read_by: dict[UnitKey, set[UnitKey]] = field(default_factory=dict)
    # changed class body -> the names its changed statements bind (`timeframes`), on base
    class_bound: dict[UnitKey, set[str]] = field(default_factory=dict)
    at_import: set[str] = field(default_factory=set)  # modules whose changed functions run at import
    impacted: set[UnitKey] = field(default_factory=set)  # public units reached without being changed
    definitions: list[Operation] = field(default_factory=list)  # public operations the sources define
    roots: dict[str, Path] = field(default_factory=dict)  # side -> checkout root, for `innermost`
    _spans: dict[tuple[str, str], tuple[Span, ...]] = field(default_factory=dict)
    _modules: dict[tuple[str, str], str] = field(default_factory=dict)  # (side, path) -> module

    @staticmethod
    def of(changes: ChangeSet, sources: dict[str, str], roots: dict[str, Path] | None = None,
           importers: dict[str, str] | None = None, packages: frozenset[str] = frozenset()) -> Impact:
        """`sources`: the changed modules' base sources; `importers`: those of the modules built on
        them (`ChangeSet.importers`); `packages`: which of all those are packages (`__init__.py`),
        for their relative imports."""
        impact = Impact(changes, sources, roots=roots or {})
        parsed = _Parsed.of({**(importers or {}), **sources})
        impact.calls = {module: parsed.calls.get(module, {}) for module in sources}
        impact.calls_by_name = {module: _called_names(parsed.trees[module], tables=False)
                                if module in parsed.trees else {} for module in sources}
        changed = {(u.module, u.qualname) for u in changes.units if u.kind in ("function", "method")}
        impact.reached_by = {unit: {unit} | _callers(unit[0], impact.calls.get(unit[0], {}), {unit[1]})
                             for unit in changed}
        impact.at_import = _changed_at_import(changes, sources)
        impact.imported_by = _reached_through_imports(changes, parsed, packages, impact.reached_by)
        impact.class_bound = _class_bindings(changes, parsed)
        impact.read_by = _class_data_readers(impact.class_bound, parsed)
        impact.impacted = _impacted_units(changes, impact.calls)
        impact.definitions = [op for module, source in sources.items() for op in _definitions(module, source)]
        return impact

    def reached_directly(self) -> list[str]:
        """Changed private functions and methods (on both commits) that no code of their module calls
        by name, to be called directly (`pkg.mod:_asciidoc_row`, reached only through a table, whose
        readers pass it the table's arguments, not its own;
        `_Validator._process_summary`, only through `getattr`): otherwise nothing runs them. One a
        private caller calls (`_determine_setters`, called by `_ClassBuilder.__init__`) is left out:
        its callers adapt to what a refactoring changes in it, and a call of it alone would report
        that as a difference. Name-mangled methods and nested functions cannot be named from
        outside, and are left out too."""
        kinds = {(u.module, u.qualname): u for u in self.changes.units}
        named = self.calls_by_name
        found = []
        for unit in sorted(self.reached_by):
            changed = kinds.get(unit)
            reached = _callers(unit[0], named.get(unit[0], {}), {unit[1]})  # a table's readers do not count
            callers = {key for key in reached if key[1] in named.get(key[0], {})}  # not classes
            if (changed is None or changed.status != "modified" or is_public(unit[1]) or "<" in unit[1]
                    or any(part.startswith("__") and not part.endswith("__") for part in unit[1].split("."))
                    or callers):
                continue
            found.append(f"{unit[0]}:{unit[1]}")
        return found

    def subclassed(self) -> list[str]:
        """Classes (`pkg.mod:Version`) whose methods or class body changed, to be built as a
        subclass with nothing of its own as well: a method that builds `Version(...)` where it
        should build `type(self)(...)`, or compares `type(other) is Version`, differs only there.
        A private class is none a user subclasses, and is left out, as are classes nested in
        functions (they cannot be named from outside)."""
        found = {(u.module, u.qualname.rsplit(".", 1)[0]) for u in self.changes.units
                 if u.kind == "method" and "." in u.qualname and u.status == "modified"}
        found |= {(u.module, u.qualname) for u in self.changes.units
                  if u.kind == "class" and u.status == "modified"}
        return sorted(f"{module}:{qualname}" for module, qualname in found
                      if "<" not in qualname and is_public(qualname))

    def class_values(self) -> list[str]:
        """The public class-level values (`pkg.mod:TurkishLocale.timeframes`) that the changed
        statements of a public class's body bind, to be read and compared as a module's tables
        are: a regression in one entry of a class's table shows there whatever input the
        methods reading it would need. Names private to the class (`_cache`, `__slots__`) are
        its implementation, not its data."""
        return sorted(f"{module}:{qualname}.{name}" for (module, qualname), names in self.class_bound.items()
                      if "<" not in qualname and is_public(qualname)
                      for name in names if not name.startswith("_"))

    # ------------------------------------------------------------ reach

    def whole_modules(self, operations: list[Operation]) -> set[str]:
        """Modules every operation of which is a target: their module-level code changed (a table,
        a constant, a compiled pattern every function may read), their changed functions run at
        import, or a changed unit is reached by no operation known (a method of a private helper
        class, `_Timer.__enter__`, reached only through other classes)."""
        keys = {(op.module, op.qualname) for op in operations}
        owners = {(op.module, op.qualname.rsplit(".", 1)[0]) for op in operations if "." in op.qualname}
        unreached = {unit[0] for unit, reached in self.reached_by.items()
                     if not (reached | self.imported_by.get(unit, set())) & keys
                     and (unit[0], unit[1].rsplit(".", 1)[0]) not in owners}
        module_level = {u.module for u in self.changes.units if u.kind == "module"}
        return self.at_import | unreached | module_level

    def focus(self, operations: list[Operation]) -> set[str]:
        """Ids of the operations that touch the change: those whose unit changed or that call a
        changed unit, those of changed classes and of whole modules, and the constructors of
        classes whose methods changed (building the object is the first step towards them)."""
        changed = {(u.module, u.qualname) for u in self.changes.units if u.kind in ("function", "method")}
        changed_classes = {(u.module, u.qualname) for u in self.changes.units if u.kind == "class"}
        reached = set().union(*self.reached_by.values(), *self.imported_by.values(), *self.read_by.values())
        whole = self.whole_modules(operations)
        found: set[str] = set()
        for op in operations:
            key = (op.module, op.qualname)
            owner = (op.module, op.qualname.rsplit(".", 1)[0]) if "." in op.qualname else None
            builds_changed = op.kind == OperationKind.CONSTRUCTOR and (key in changed_classes or any(
                m == op.module and q.startswith(op.qualname + ".") for m, q in changed))
            # setting an attribute of a class whose methods changed configures the object for them
            configures_changed = owner is not None and setter_target(op.id) is not None and any(
                m == op.module and q.startswith(owner[1] + ".") for m, q in changed)
            dispatched = {tuple(d.split(":", 1)) for d in op.dispatches}
            if (key in reached or owner in changed_classes or op.module in whole or builds_changed
                    or configures_changed or dispatched & (reached | changed)):
                found.add(op.id)
        return found

    def reaching(self, operations: list[Operation], units: set[UnitKey]) -> dict[UnitKey, set[str]]:
        """For each unit, the ids of the operations through which a test reaches it.

        A function or method: itself and its callers by name within the module (transitively);
        a class: its operations; module-level code, or any unit of a whole module: every
        operation of the module; and for all of them, the operations of other modules that reach
        it through what they import. A unit no operation reaches maps to an empty set.
        """
        by_key: dict[UnitKey, set[str]] = {}
        for op in operations:
            by_key.setdefault((op.module, op.qualname), set()).add(op.id)
            for dunder in op.dispatches:  # `hash(x)` reaches `X.__hash__`
                module, _, qualname = dunder.partition(":")
                by_key.setdefault((module, qualname), set()).add(op.id)
        whole = self.whole_modules(operations)
        kinds = {(u.module, u.qualname): u.kind for u in self.changes.units}
        found: dict[UnitKey, set[str]] = {}
        for module, qualname in units:
            unit = (module, qualname)
            elsewhere = self.imported_by.get(unit, set()) | self.read_by.get(unit, set())
            imported = set().union(*(by_key.get(key, set()) for key in elsewhere))
            if kinds.get(unit) == "module" or (module in whole and unit in kinds):
                found[unit] = {op.id for op in operations if op.module == module} | imported
                continue
            reached = self.reached_by.get(unit, {unit})
            ids = set().union(*(by_key.get(key, set()) for key in reached))
            ids |= {op.id for op in operations
                    if op.module == module and op.qualname.startswith(qualname + ".")}  # a class's operations
            found[unit] = ids | imported
        return found

    # ------------------------------------------------------------ lines

    def unit_at(self, side: str, path: str, line: int) -> UnitKey | None:
        """The (module, innermost qualname) around `line` of a changed file on `side`; None when
        the file is no module."""
        if not self._modules:
            for change in self.changes.files:
                for side_of, path_of in zip(SIDES, (change.base_path, change.head_path), strict=True):
                    if change.module and path_of:
                        self._modules[(side_of, path_of)] = change.module
        module = self._modules.get((side, path))
        return (module, self.innermost(side, path, line)) if module is not None else None

    def innermost(self, side: str, path: str, line: int) -> str:
        """The qualname of the innermost function, method or class around `line` of a file on
        `side` ("base" or "head"), `<module>` outside any; each file is parsed once."""
        if (side, path) not in self._spans:
            root = self.roots.get(side)
            self._spans[(side, path)] = _spans(root / path) if root is not None else ()
        containing = [span for span in self._spans[(side, path)] if line in span and span.qualname != MODULE]
        if not containing:
            return MODULE
        return min(containing, key=lambda span: span.end - span.start).qualname


def analyze_impact(changes: ChangeSet, base: Checkout, head: Checkout) -> Impact:
    """The impact of `changes`, from the base sources of the changed modules and their importers."""
    importers: dict[str, str] = {}
    packages = {change.module for change in changes.files
                if change.module and (change.base_path or "").endswith("/__init__.py")}
    for module in changes.importers:
        for root in base.import_roots:
            stem = root / module.replace(".", "/")
            path = next((p for p in (stem.with_suffix(".py"), stem / "__init__.py") if p.is_file()), None)
            if path is not None:
                importers[module] = path.read_text(encoding="utf-8", errors="replace")
                if path.name == "__init__.py":
                    packages.add(module)
                break
    return Impact.of(changes, read_sources(base.root, changes), {"base": base.root, "head": head.root},
                     importers, frozenset(packages))


def read_sources(root: Path, changes: ChangeSet) -> dict[str, str]:
    """module -> base source text of the changed modules that exist on base."""
    sources = {}
    for change in changes.files:
        if change.module and change.base_path:
            path = root / change.base_path
            if path.exists():
                sources[change.module] = path.read_text(encoding="utf-8", errors="replace")
    return sources


def is_public(qualname: str) -> bool:
    """No part of the dotted name is private; dunders (`__init__`, `__lt__`) are public."""
    return all(not part.startswith("_") or (part.startswith("__") and part.endswith("__"))
               for part in qualname.split("."))


# ---------------------------------------------------------------- the analyses


def _impacted_units(changes: ChangeSet, calls: dict[str, dict[str, set[str]]]) -> set[UnitKey]:
    """The public functions and methods that call a changed unit by name within its module
    (transitively), and the public classes whose methods changed; changed units left out."""
    changed = {(u.module, u.qualname) for u in changes.units}
    found: set[UnitKey] = set()
    for module, module_calls in calls.items():
        names = {q for m, q in changed if m == module}
        found |= _callers(module, module_calls, names)
    found |= {(u.module, u.qualname.rsplit(".", 1)[0]) for u in changes.units
              if u.kind == "method" and "." in u.qualname}
    return {unit for unit in found - changed if is_public(unit[1])}


@dataclass(frozen=True)
class _Parsed:
    """The changed modules and their importers, each parsed once: its syntax tree, and per
    function or method the names it uses and those it calls."""

    trees: dict[str, ast.Module]
    used: dict[str, dict[str, set[str]]]  # module -> qualname -> names read or called (`_used_names`)
    calls: dict[str, dict[str, set[str]]]  # module -> qualname -> names called (`_called_in`)

    @staticmethod
    def of(sources: dict[str, str]) -> _Parsed:
        trees = {module: tree for module, source in sources.items() if (tree := _parse(source)) is not None}
        return _Parsed(trees, {module: _used_names(tree) for module, tree in trees.items()},
                       {module: _called_names(tree) for module, tree in trees.items()})


def _reached_through_imports(changes: ChangeSet, parsed: _Parsed, packages: frozenset[str],
                             reached_by: dict[UnitKey, set[UnitKey]]) -> dict[UnitKey, set[UnitKey]]:
    """For each changed function, method or module-level code, the units of the other parsed
    modules that use a name it is reached through, as they import it (`from ._tokenizer import
    RULES`, `from . import _tokenizer` then `_tokenizer.RULES`), with their callers in their
    module; then those units' names in turn, IMPACT_DEPTH imports deep. A module-level change is
    reached through the names its changed statements bind (a table, a compiled pattern) and the
    functions of its module that read them."""
    trees, used, calls = parsed.trees, parsed.used, parsed.calls
    imports = {module: imported_names(tree, module, module in packages) for module, tree in trees.items()}
    found: dict[UnitKey, set[UnitKey]] = {}
    for unit in changes.units:
        key = (unit.module, unit.qualname)
        if unit.kind == "module" and unit.module in trees:
            bound = _bound_in(trees[unit.module].body, _base_lines(changes, unit.module))
            readers = {q for q, names in used[unit.module].items() if names & bound}
            within = readers | {q for _, q in _callers(unit.module, calls.get(unit.module, {}), readers)}
            frontier = {unit.module: bound | {q.split(".")[0] for q in within}}
        elif key in reached_by:
            frontier = {unit.module: {q.split(".")[0] for _, q in reached_by[key]}}
        else:
            continue
        reached: set[UnitKey] = set()
        for _ in range(IMPACT_DEPTH):
            step: dict[str, set[str]] = {}
            for module, names_used in used.items():
                wanted = {local for local, (source, name) in imports[module].items()
                          if name is not None and name in frontier.get(source, ())}
                wanted |= {f"{local}.{name}" for local, (source, original) in imports[module].items()
                           if original is None for name in frontier.get(source, ())}
                hits = {q for q, names in names_used.items() if names & wanted}
                hits |= {q for _, q in _callers(module, calls.get(module, {}), hits)}
                new = {(module, q) for q in hits} - reached - {key}
                reached |= new
                if new:
                    step.setdefault(module, set()).update(q.split(".")[0] for _, q in new)
            if not step:
                break
            frontier = step
        if reached:
            found[key] = reached
    return found


def _class_bindings(changes: ChangeSet, parsed: _Parsed) -> dict[UnitKey, set[str]]:
    """For each changed class body, the names its changed statements bind on base (a class-level
    table or constant: a locale's `timeframes`)."""
    found: dict[UnitKey, set[str]] = {}
    for unit in changes.units:
        tree = parsed.trees.get(unit.module) if unit.kind == "class" else None
        node = _class_node(tree, unit.qualname) if tree is not None else None
        bound = _bound_in(node.body, _base_lines(changes, unit.module)) if node is not None else set()
        if bound:
            found[(unit.module, unit.qualname)] = bound
    return found


def _class_data_readers(bindings: dict[UnitKey, set[str]], parsed: _Parsed) -> dict[UnitKey, set[UnitKey]]:
    """For each changed class body and the names it binds (`_class_bindings`), the functions of
    its module that read them through `self`, `cls` or the class's name, often methods of a base
    class the changed class inherits (`describe` formats with `self.timeframes`), and their
    callers in the module."""
    found: dict[UnitKey, set[UnitKey]] = {}
    for (module, qualname), bound in bindings.items():
        name = qualname.rsplit(".", 1)[-1]
        wanted = {f"{owner}.{bound_name}" for owner in ("self", "cls", name) for bound_name in bound}
        readers = {q for q, names in parsed.used[module].items() if names & wanted}
        reached = {(module, q) for q in readers}
        reached |= _callers(module, parsed.calls[module], readers)
        if reached:
            found[(module, qualname)] = reached
    return found


def _class_node(tree: ast.Module, qualname: str) -> ast.ClassDef | None:
    """The class statement of `qualname` (`Outer.Inner`) in `tree`, if any."""
    body: list[ast.stmt] = tree.body
    node: ast.ClassDef | None = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _bound_in(body: list[ast.stmt], lines: set[int]) -> set[str]:
    """Names bound by the statements of `body` (not definitions) that hold one of `lines`."""
    bound: set[str] = set()
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(statement.lineno <= line <= (statement.end_lineno or statement.lineno) for line in lines):
            bound |= {node.id for node in ast.walk(statement)
                      if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return bound


def _base_lines(changes: ChangeSet, module: str) -> set[int]:
    """The changed base lines of `module`."""
    return set().union(*(change.base_lines for change in changes.files if change.module == module))


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, Function]]:
    """The top-level functions and the methods of classes (nested ones too) of `tree`, by qualname."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + child.name, child


def _used_names(tree: ast.Module) -> dict[str, set[str]]:
    """qualname -> the names its function reads or calls (`x`, and `mod.x` for an attribute of a
    name), its defaults and decorators included, for top-level functions and methods."""
    used: dict[str, set[str]] = {}
    for qualname, function in _functions(tree):
        names = used[qualname] = set()
        for n in ast.walk(function):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                names.add(f"{n.value.id}.{n.attr}")
    return used


def _changed_at_import(changes: ChangeSet, sources: dict[str, str]) -> set[str]:
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
    tree = _parse(source)
    if tree is None:
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


def _callers(module: str, calls: dict[str, set[str]], changed: set[str]) -> set[UnitKey]:
    """Units of `module` that call one of `changed` (by last name component), transitively, and
    the classes whose construction one of those is (`Meter.__init__` runs when `Meter(...)` is
    called, so code that calls `Meter` calls it, and so does the constructor operation `Meter`).

    `calls`: qualname -> names it calls, from `_called_names`.
    """
    reached = set(changed)
    for _ in range(IMPACT_DEPTH):
        reached |= _classes_built(reached)
        names = {q.rsplit(".", 1)[-1] for q in reached}
        new = {q for q, called in calls.items() if called & names} - reached
        if not new:
            break
        reached |= new
    reached |= _classes_built(reached)
    return {(module, q) for q in reached - set(changed)}


def _classes_built(qualnames: set[str]) -> set[str]:
    """The classes of the construction methods among `qualnames`."""
    return {q.rsplit(".", 1)[0] for q in qualnames if "." in q and q.rsplit(".", 1)[1] in CONSTRUCTION}


def _called_names(tree: ast.Module, tables: bool = True) -> dict[str, set[str]]:
    """qualname -> names called in its body, for top-level functions and methods.

    Syntax that calls dunder methods counts as calling them: `with` calls `__enter__`, a
    subscript `__getitem__`, `in` `__contains__`, `<` `__lt__`, a `for` loop `__iter__`. Code that
    reads a module-level table (a dispatch table, a registry) may call every function it holds
    (unless not `tables`: calls by name only).
    """
    held: dict[str, set[str]] = {}
    for entry in table_entries(tree) if tables else ():
        held.setdefault(entry.table, set()).add(entry.name)
    result: dict[str, set[str]] = {}
    for qualname, function in _functions(tree):
        called = {name for n in ast.walk(function) for name in _names_called_by(n)}
        for n in ast.walk(function):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in held:
                called |= held[n.id]
        result[qualname] = called
    return result


@dataclass(frozen=True)
class TableEntry:
    """A function or class that a module-level table holds (`_formats = {"asciidoc":
    TableFormat(row=partial(_asciidoc_row, False))}`): code that reads the table may call it, and
    the key it is held under is the value that selects it."""

    table: str  # the module-level name the table is assigned to
    name: str  # the function's or class's name
    key: str | None  # the string key of the dict entry that holds it, if any
    line: int  # that key's line (else the reference's)


def table_entries(tree: ast.Module) -> list[TableEntry]:
    """The functions and classes of the module that its module-level assignments hold in a value
    (not those they call: `X = make()` runs `make` at import, it does not hold it)."""
    defined = {node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found: list[TableEntry] = []
    if not defined:  # a module of data alone (a generated table) holds none of its own
        return found
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            tables, value = [t.id for t in statement.targets if isinstance(t, ast.Name)], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            tables = [statement.target.id] if isinstance(statement.target, ast.Name) else []
            value = statement.value
        else:
            continue
        held = [node for node in ast.walk(value)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defined]
        if not tables or not held:
            continue
        called = {id(node.func) for node in ast.walk(value) if isinstance(node, ast.Call)}  # run, not held
        keys: dict[int, tuple[str, int]] = {}  # id of a node under a dict entry -> its key and line
        for node in ast.walk(value):
            if isinstance(node, ast.Dict):
                for key, item in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        keys.update((id(n), (key.value, key.lineno)) for n in ast.walk(item))
        for node in held:
            if id(node) not in called:
                key, line = keys.get(id(node), (None, node.lineno))
                found += [TableEntry(table, node.id, key, line) for table in tables]
    return found


_OPERATOR_DUNDERS = {
    ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__", ast.Eq: "__eq__",
    ast.NotEq: "__ne__", ast.In: "__contains__", ast.NotIn: "__contains__", ast.Add: "__add__",
    ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__", ast.BitAnd: "__and__", ast.BitOr: "__or__", ast.BitXor: "__xor__",
}
_SUBSCRIPT_DUNDERS = {ast.Load: "__getitem__", ast.Store: "__setitem__", ast.Del: "__delitem__"}
BUILTINS_CALLING_DUNDERS = frozenset({"len", "iter", "repr", "str", "reversed"})  # f(x) calls x.__f__()


def _names_called_by(node: ast.AST) -> tuple[str, ...]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return (node.func.id, f"__{node.func.id}__") if node.func.id in BUILTINS_CALLING_DUNDERS \
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


def _definitions(module: str, source: str) -> list[Operation]:
    """The operations a worker's catalog would list for the module, as the source defines them:
    public functions, public classes (their constructors), and their public methods and
    operator dunders; a name a literal `__all__` lists is public too, underscore or not."""
    tree = _parse(source)
    if tree is None:
        return []
    exported = _exported(tree) or set()
    found: list[Operation] = []
    for node in _top_level(tree.body):
        if not (node.name in exported or not node.name.startswith("_")):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(_operation(module, node.name, OperationKind.FUNCTION, None))
        else:  # exception classes too: their messages and attributes are behaviour
            owner = f"{module}.{node.name}"
            found.append(_operation(module, node.name, OperationKind.CONSTRUCTOR, owner))
            for method in _top_level(node.body):
                decorators = {name_of(d) for d in getattr(method, "decorator_list", ())}
                if (not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
                        or decorators & NOT_OPERATIONS
                        or (method.name.startswith("_") and method.name not in OPERATION_DUNDERS)):
                    continue
                kind = OperationKind.STATIC if decorators & STATIC_DECORATORS else OperationKind.METHOD
                found.append(_operation(module, f"{node.name}.{method.name}", kind, owner))
    return found


def _top_level(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The definitions of a body, those under `if`/`try` blocks included."""
    found: list = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node)
        elif isinstance(node, (ast.If, ast.Try)):
            blocks = [node.body, node.orelse, *([h.body for h in node.handlers] if isinstance(node, ast.Try)
                                                 else []), getattr(node, "finalbody", [])]
            for block in blocks:
                found.extend(_top_level(block))
    return found


def _exported(tree: ast.Module) -> set[str] | None:
    for node in tree.body:
        named_all = any(isinstance(t, ast.Name) and t.id == "__all__" for t in getattr(node, "targets", ()))
        if (isinstance(node, ast.Assign) and named_all and isinstance(node.value, (ast.List, ast.Tuple))
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)):
            return {e.value for e in node.value.elts}  # type: ignore[attr-defined]
    return None


def name_of(node: ast.expr) -> str:
    """The last name of a decorator or base: `property`, `x.setter` -> `setter`, `abc.ABC` -> `ABC`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _operation(module: str, qualname: str, kind: str, owner: str | None) -> Operation:
    return Operation(f"{module}:{qualname}", kind, owner, (), (), None, None)


def _parse(source: str) -> ast.Module | None:
    return parsed(source)


def _spans(path: Path) -> tuple[Span, ...]:
    try:
        return parse_spans(path.read_bytes()) or ()
    except OSError:
        return ()
