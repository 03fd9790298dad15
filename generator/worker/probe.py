"""Changed-code coverage in the worker: coverage.py, restricted to the changed files.

Line and arc (branch) coverage come from coverage.py's tracer with `include` set to the
changed files of this commit, so code elsewhere runs at nearly full speed. Arcs are
returned raw, as the tracer saw them: the host maps them onto coverage.py's static
branches. When a run wants to know which *statement* ran a changed line (to place a
difference on a line), each statement gets its own dynamic context; when it wants each
sequence's path through changed code (the host's path memo), each sequence does, and the
arcs out of the branching lines the host names come back per sequence.

coverage.py is the one dependency the worker may have beyond the standard library. When
the project's interpreter lacks it, the worker appends the host's copy of it to
`sys.path` (after the project's own paths, so that a project's own coverage wins); when
that cannot import either, coverage is unavailable and the host says so in its report.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

UNATTRIBUTED = -1  # the statement of a line covered outside per-statement runs
SEQUENCE_CONTEXT = "s"  # prefix of a sequence's dynamic context (a statement's is its bare index)


class CoverageProbe:
    def __init__(self, lines: dict[str, list[int]], fallback_path: str | None = None) -> None:
        """`lines`: absolute file -> changed lines of this commit; only those files are measured."""
        self._changed = {path: frozenset(found) for path, found in lines.items()}
        self._coverage: Any = None
        self.version: str | None = None
        self.error: str | None = None
        self._per_statement = False
        self._branching: dict[str, frozenset[int]] = {}  # file -> lines whose arcs make a sequence's path
        if self._changed:
            self._coverage = _new_coverage(list(self._changed), fallback_path, self)

    @property
    def available(self) -> bool:
        return self._coverage is not None

    def start(self, per_statement: bool = False, branching: dict[str, list[int]] | None = None) -> None:
        """`branching`: file -> lines; the arcs out of them are reported per sequence (see
        `sequence`), unless coverage runs per statement."""
        if self._coverage is None:
            return
        self._per_statement = per_statement
        self._branching = ({} if per_statement
                           else {file: frozenset(found) for file, found in (branching or {}).items()})
        self._coverage.start()  # nothing measured since the last `stop` erased its data
        if per_statement:
            self.statement(0)

    def statement(self, index: int) -> None:
        """Attribute what runs from now on to statement `index` (per-statement runs only)."""
        if self._coverage is not None and self._per_statement:
            self._coverage.switch_context(str(index))

    def sequence(self, position: int) -> None:
        """Attribute what runs from now on to the sequence at `position` of the request (when
        paths are measured)."""
        if self._coverage is not None and self._branching:
            self._coverage.switch_context(f"{SEQUENCE_CONTEXT}{position}")

    def stop(self) -> dict[str, Any]:
        """What ran since `start`: `arcs` [[file, from, to]] of the changed files, `covered`
        [[statement, file, line]] for the changed lines (statement -1 unless per statement),
        and, when paths are measured, `paths` {position: [[file, from, to]]}: each sequence's
        arcs out of the branching lines (a sequence that took none is absent)."""
        if self._coverage is None:
            return {}
        self._coverage.stop()
        data = self._coverage.get_data()
        paths = self._paths(data) if self._branching else None
        arcs: list[list] = []
        covered: set[tuple[int, str, int]] = set()
        for path, changed in self._changed.items():
            arcs.extend([path, a, b] for a, b in sorted(data.arcs(path) or ()))
            if self._per_statement:
                for line, contexts in data.contexts_by_lineno(path).items():
                    if line in changed:
                        covered.update((int(c) if c.lstrip("-").isdigit() else UNATTRIBUTED, path, line)
                                       for c in contexts)
            else:
                ran = data.lines(path) or ()
                covered.update((UNATTRIBUTED, path, line) for line in ran if line in changed)
        self._coverage.erase()
        found: dict[str, Any] = {"arcs": arcs, "covered": [list(item) for item in sorted(covered)]}
        if paths is not None:
            found["paths"] = paths
        return found

    def _paths(self, data: Any) -> dict[str, list[list]]:
        """Per sequence position, its arcs out of the branching lines (one query per context)."""
        paths: dict[str, list[list]] = {}
        for context in sorted(data.measured_contexts()):
            if not context.startswith(SEQUENCE_CONTEXT):
                continue
            data.set_query_context(context)
            arcs = [[path, a, b] for path, lines in self._branching.items()
                    for a, b in sorted(data.arcs(path) or ()) if a in lines]
            if arcs:
                paths[context[len(SEQUENCE_CONTEXT):]] = arcs
        data.set_query_contexts(None)
        return paths

    def ready_for_children(self) -> None:
        """Start and stop coverage.py once, measuring nothing: a forked child's `start` then
        resumes it. A start after an erase initializes coverage.py again (about 15 ms), in every
        child, that is in every batch of sequences."""
        if self._coverage is not None:
            self._coverage.start()
            self._coverage.stop()

    def measure(self, action: Callable[[], Any]) -> tuple[Any, dict[str, list]]:
        """Run `action` (e.g. the imports) under coverage; its result and what it covered."""
        self.start()
        try:
            result = action()
        finally:
            covered = self.stop()
        return result, covered


def _new_coverage(files: list[str], fallback_path: str | None, probe: CoverageProbe) -> Any:
    try:
        import coverage
    except ImportError:
        if fallback_path is None:
            probe.error = "coverage.py is not installed in the project's interpreter"
            return None
        sys.path.append(fallback_path)
        try:
            import coverage
        except (ImportError, SyntaxError) as exc:  # a Python the host's copy does not support (3.9)
            sys.path.remove(fallback_path)
            for name in [n for n in sys.modules if n == "coverage" or n.startswith("coverage.")]:
                del sys.modules[name]
            version = ".".join(map(str, sys.version_info[:2]))
            probe.error = (f"the host's coverage.py cannot be imported under Python {version} "
                           f"({type(exc).__name__}: {exc}); install coverage in the project's interpreter")
            return None
    probe.version = coverage.__version__
    # No data file, no configuration file of the project's, no plugins: measurement only.
    return coverage.Coverage(data_file=None, branch=True, include=files, config_file=False,
                             auto_data=False)
