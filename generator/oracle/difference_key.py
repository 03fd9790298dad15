"""What makes two differences the same: `DifferenceKey`, the one definition of it.

A key is the difference's kind, the code that ran, and what was observed (the exception, or a
path from the statement's result or from an object it was given). Exploration groups its
candidates by it (the target is then the operation the statement calls; a confirming run names
the function that actually ran); confirmation merges findings with the same key in the same
changed hunk; minimization accepts a smaller case only if it shows the same key, with values of
the same shapes (`leaves.shape`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..report.model import DifferenceKind
from ..worker.protocol import ARGUMENT, EXCEPTION_MARK, RESULT, ObservationKey
from .compare import Mismatch, kind_of


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
