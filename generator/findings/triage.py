"""Triage: why a difference is there, as far as the run can tell, with the evidence.

Most differences a pull request shows are meant; the ones nothing accounts for are the possible
regressions a reviewer must read first. Each difference gets a `Verdict` and the evidence it rests
on. The evidence read so far is the input's realism: a difference only an input outside its
operation's declared types shows (`f(None)` for `f(text: str)`) is reported apart and fails
nothing. Everything else is unexplained.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..report.model import Difference, Verdict
from ..runtime.catalog import Operation
from .declared_types import outside_declared_types


def triage(differences: list[Difference], operations: Mapping[str, Operation]) -> list[Difference]:
    """Give each difference its verdict and evidence, in place; the same list, for chaining."""
    for difference in differences:
        outside = outside_declared_types([s.to_json() for s in difference.statements], operations)
        if outside is not None:
            difference.verdict = Verdict.OUTSIDE_DECLARED_TYPES
            difference.evidence = f"only an input outside the declared types shows it: {outside}"
    return differences
