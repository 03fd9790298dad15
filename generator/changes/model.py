"""The changed code as plain data: the two checkouts, and the diff mapped onto modules and units."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Checkout:
    """One commit checked out as a worktree, with the folders that go on sys.path."""

    ref: str
    sha: str
    root: Path
    import_roots: tuple[Path, ...]
    # the host's environment variables the project's settings pass to its code (`pass-env`), beside
    # the allow-list every project gets (`changes.environment`)
    pass_env: tuple[str, ...] = ()



UnitKind = Literal["module", "class", "function", "method"]



ChangeStatus = Literal["modified", "added", "removed"]



@dataclass(frozen=True)
class Unit:
    """A changed AST unit: a function, method, class or module-level code.

    `qualname` is the dotted name inside the module (`Cache.__setitem__`, `parse`),
    `<module>` for module-level statements. Lines are 1-based and inclusive, on the
    side the unit exists (head for added/modified, base for removed).
    """

    module: str
    qualname: str
    kind: UnitKind
    status: ChangeStatus
    path: str  # repository-relative, posix
    start: int
    end: int

    @property
    def target(self) -> str:
        return f"{self.module}:{self.qualname}"



@dataclass(frozen=True)
class FileChange:
    """Lines changed in one Python file: removed/modified lines on base, added/modified on head."""

    base_path: str | None  # None when the file was added
    head_path: str | None  # None when the file was deleted
    module: str | None  # dotted module name (head's, or base's for deleted files)
    base_lines: frozenset[int]
    head_lines: frozenset[int]
    # (base start, base length, head start, head length) per hunk of the zero-context diff
    hunks: tuple[tuple[int, int, int, int], ...] = field(default=(), compare=False)

    def hunk_at(self, side: str, line: int) -> int | None:
        """The index of the hunk that changed `line` on `side` ("base" or "head"), if any."""
        for index, (base_start, base_length, head_start, head_length) in enumerate(self.hunks):
            start, length = (base_start, base_length) if side == "base" else (head_start, head_length)
            if start <= line < start + length:
                return index
        return None



@dataclass(frozen=True)
class ChangeSet:
    """The merge-base..head diff mapped onto Python modules and units."""

    merge_base: str
    files: tuple[FileChange, ...]
    units: tuple[Unit, ...]
    skipped: tuple[str, ...] = ()  # non-Python, binary or non-importable files, for the report
    # the test files the change adds or modifies, with their changed lines (for carving)
    tests: tuple[FileChange, ...] = ()
    # the package's root, and modules built on a changed private one (see `importers`)
    importers: tuple[str, ...] = ()

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(sorted({f.module for f in self.files if f.module}))

    @property
    def added_modules(self) -> frozenset[str]:
        """Modules the change adds: base has nothing to import or compare them with."""
        return frozenset(f.module for f in self.files if f.module and f.base_path is None)
