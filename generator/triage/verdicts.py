"""Each difference's verdict, with the evidence it rests on: the first of `rules.RULES` that
accounts for it, else `unexplained` with what came closest."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ..changes.model import Unit
from ..report.model import Difference, Verdict
from ..runtime.catalog import Operation
from .evidence import Evidence, Found, Missed
from .pull_request import PullRequestText
from .rules import RULES


def triage(differences: list[Difference], operations: Mapping[str, Operation],
           text: PullRequestText | None = None, units: Sequence[Unit] = (),
           broken: Mapping[str, frozenset[str]] | None = None,
           asserting: Mapping[str, frozenset[str]] | None = None,
           updated: Mapping[str, frozenset[str]] | None = None,
           classes: Mapping[str, dict] | None = None,
           stated: Collection[str] = ()) -> list[Difference]:
    """Give each difference its verdict, evidence and rule, in place; the same list, for chaining.
    The arguments are the parts of the evidence record (`evidence.Evidence`)."""
    evidence = Evidence(differences, operations, text, units, broken or {}, asserting or {}, updated or {},
                        classes or {}, stated)
    return judge(evidence)


def judge(evidence: Evidence) -> list[Difference]:
    """Each rule in turn over the differences no earlier rule decided (so that a rule may read what
    the earlier ones decided); what no rule decides is unexplained, with the rules' near misses."""
    differences = list(evidence.differences)
    for difference in differences:
        difference.verdict, difference.evidence, difference.rule, difference.closest = \
            Verdict.UNEXPLAINED, "", "", []
    for rule in RULES:
        for difference in differences:
            if difference.rule:
                continue
            judgement = rule.judge(difference, evidence)
            if isinstance(judgement, Found):
                difference.verdict, difference.evidence, difference.rule = rule.verdict, judgement.evidence, \
                    rule.name
                difference.closest = []
            elif isinstance(judgement, Missed):
                difference.closest.append(judgement.closest)
    return list(evidence.differences)
