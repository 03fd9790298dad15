"""The host's view of the catalog: what the changed modules offer to call, as a base worker
listed it after importing them (operations with their parameters and type hints, classes
with their MROs), and which modules do not import on base or on head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..worker.protocol import OperationKind
from ..worker.resolve import setter_target


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # inspect.Parameter kind name
    has_default: bool
    hints: tuple[str, ...]
    choices: tuple[tuple, ...] = ()
    default_is_none: bool = False
    hints_from: str = ""  # "" (annotation), "docstring", "default", "isinstance", "dispatch" or "attributes"
    # a command line's argv: the words its source spells, (text, takes a value, the value's choices)
    options: tuple[tuple[str, bool, tuple[str, ...]], ...] = ()
    # a container hint's element types, one tuple of hints per type argument:
    # `list[tuple]` -> (("builtins.list", (("builtins.tuple",),)),)
    elements: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
    # a `**kwargs` parameter's options read from the source: (key, the literals it is compared with)
    keywords: tuple[tuple[str, tuple[tuple, ...]], ...] = ()
    arities: tuple[int, ...] = ()  # a `*args` parameter: the counts of values its code reads it as taking
    # the classes its annotation names, one of which an argument must be an instance of (None: not
    # known, or not decided by a class check)
    declared: tuple[str, ...] | None = None

    @staticmethod
    def from_json(data: dict) -> Parameter:
        options = tuple((text, takes, tuple(values)) for text, takes, values in data.get("options", ()))
        elements = tuple((container, tuple(tuple(hints) for hints in arguments))
                         for container, arguments in data.get("elements", {}).items())
        keywords = tuple((key, tuple(tuple(c) for c in choices)) for key, choices in data.get("keywords", ()))
        return Parameter(data["name"], data["kind"], data["has_default"], tuple(data.get("hints", ())),
                         tuple(tuple(c) for c in data.get("choices", ())), data.get("default") == ["none"],
                         data.get("hints_from", ""), options, elements, keywords,
                         tuple(data.get("arities", ())),
                         tuple(data["declared"]) if data.get("declared") else None)

    def elements_of(self, container: str) -> tuple[tuple[str, ...], ...]:
        """The element types of one of the hints (nothing known: empty)."""
        return next((arguments for hint, arguments in self.elements if hint == container), ())


@dataclass(frozen=True)
class Operation:
    id: str
    kind: str  # an OperationKind
    owner: str | None  # type name of the class, for constructors and methods
    params: tuple[Parameter, ...]
    returns: tuple[str, ...]
    file: str | None
    line: int | None
    # protocol operations: the `mod:Class.__dunder__`s they may run; a command line: its entry point
    dispatches: tuple[str, ...] = ()
    end: int | None = None  # the last line of its definition (a module value's assignment)
    direct: bool = False  # a changed private function or method no public code calls, called directly
    awaits: str = ""  # "coroutine" (an async def) or "asyncgen": its calls are awaited or drained
    size: int | None = None  # a module value that is a table (dict, list, tuple, set): its entries at import
    state: bool = False  # its calls can leave state behind that later calls read (a cache, a buffer)

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
                         tuple(data.get("returns", ())), data.get("file"), data.get("line"),
                         tuple(data.get("dispatches", ())), data.get("end"), bool(data.get("direct")),
                         data.get("awaits") or "", data.get("size"), bool(data.get("state")))


@dataclass
class Catalog:
    operations: list[Operation]
    classes: dict[str, dict]  # type name -> {"mro": [...], "abstract": bool, "protocols": [...]}
    import_errors: dict[str, str]  # changed module -> why it does not import on base
    head_import_errors: dict[str, str] = field(default_factory=dict)  # the same, on head
    compiled: dict[str, list[str]] = field(default_factory=dict)  # side -> the project's loaded extensions

    @staticmethod
    def from_json(data: dict, head: dict | None = None) -> Catalog:
        """The catalog a base worker listed; `head`, the head worker's, for its import errors."""
        return Catalog([Operation.from_json(o) for o in data["operations"]], data["classes"],
                       data.get("import_errors", {}),
                       head_import_errors=(head or {}).get("import_errors", {}),
                       compiled={"base": data.get("compiled", []), "head": (head or {}).get("compiled", [])})

    def without(self, *, protocols: bool = False, values: bool = False, commands: bool = False) -> Catalog:
        """The catalog without its protocol operations (`copy:deepcopy`, `operator:__sub__`, ...),
        the reads of module values (`pkg.units:TABLE`) and exported names (`pkg:Name<export>`),
        and/or the command lines (`pkg.cli:main<argv>`)."""
        kept = [op for op in self.operations
                if not (protocols and op.dispatches and op.kind == OperationKind.FUNCTION)
                and not (values and op.kind in (OperationKind.VALUE, OperationKind.EXPORT))
                and not (commands and op.kind == OperationKind.COMMAND)]
        return Catalog(kept, self.classes, self.import_errors, self.head_import_errors, self.compiled)

    @property
    def by_id(self) -> dict[str, Operation]:
        return {op.id: op for op in self.operations}

    def broken_on_head(self) -> dict[str, str]:
        """The changed modules that import on base and not on head, with head's error."""
        return {m: e for m, e in self.head_import_errors.items() if m not in self.import_errors}

    def importable_on_both(self, modules: tuple[str, ...]) -> set[str]:
        return set(modules) - set(self.head_import_errors) - set(self.import_errors)

    def counters(self) -> dict[str, dict[str, float]]:
        """What the techniques that mark the catalog had to act on, by technique (for
        `stats.techniques`): operations called directly, operations awaited or drained, parameters
        typed by the attributes their function uses, settable attributes, operations that keep
        state. A technique that is off marks nothing: its count is 0."""
        ops = self.operations
        return {"direct": {"operations": sum(op.direct for op in ops)},
                "asynchronous": {"operations": sum(bool(op.awaits) for op in ops)},
                "duck": {"parameters": sum(p.hints_from == "attributes" for op in ops for p in op.params)},
                "configured": {"attributes": sum(setter_target(op.id) is not None for op in ops)},
                "volume": {"operations": sum(op.state for op in ops)}}

    def constructors_of(self, type_name: str) -> list[Operation]:
        return [op for op in self.operations
                if op.kind == OperationKind.CONSTRUCTOR and op.owner == type_name]
