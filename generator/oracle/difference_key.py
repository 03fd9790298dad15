"""A behavioural difference as it moves through the stages: from a mismatch in a replayed
sequence, to a confirmed finding with a location, to a minimized case.

`DifferenceKey` is the one definition of "the same difference": its kind, the code that ran,
and what was observed (the exception, or a path from the statement's result or from an
object it was given). Exploration groups its candidates by it (the target is then the
operation the statement calls; a confirming run names the function that actually ran);
confirmation merges findings with the same key in the same changed hunk; minimization
accepts a smaller case only if it shows the same key, with values of the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..report.model import DifferenceKind
from ..worker.protocol import EXCEPTION_MARK, Leaf, ObservationKey
from .compare import Mismatch, kind_of

RESULT, ARGUMENT = "result", "argument"  # the roles an observed value can have in its statement


@dataclass(frozen=True)
class DifferenceKey:
    kind: DifferenceKind
    target: str  # "pkg.mod:Qual.name": the operation called, or (once confirmed) the function that ran
    observation: str  # "!", or the role and the path: "result@len", "argument.size"

    @staticmethod
    def of(mismatch: Mismatch, target: str) -> DifferenceKey:
        return DifferenceKey(kind_of(mismatch), target, ObservationKey.parse(mismatch.key).observation)

    @property
    def path(self) -> str:
        """The observation without its role ("!" for the exception): the key's steps."""
        return self.observation.removeprefix(RESULT).removeprefix(ARGUMENT)






def observed_path(key: str) -> str:
    """What a key observes, without its statement and variable numbers: "!" or the steps."""
    parsed = ObservationKey.parse(key)
    return EXCEPTION_MARK if parsed.is_exception else parsed.path


def shape(leaf: Leaf | None) -> tuple:
    """A leaf's kind without its value: the tag, plus the type for exceptions, API changes and objects."""
    if leaf is None:
        return ()
    if leaf[0] in ("E", "API", "T", "enum", "v", "v~"):
        return (leaf[0], leaf[1] if leaf[0] != "enum" else str(leaf[1]).rsplit(".", 1)[0])
    return (leaf[0],)






