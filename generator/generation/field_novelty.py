"""Field-coverage novelty: the redundancy filter that keeps a sequence only if it adds state.

After Godio et al., "Efficient test generation guided by field coverage criteria" (ASE
2019): an input is redundant when every relation among objects it establishes was already
covered by earlier inputs. The worker describes the objects a sequence's last statement
produced or touched as `Class.field|src|dst` triples (the worker's `fields`):

* triples, not whole-state digests, so a state that only recombines edges seen before
  counts as old, and growing a structure by one node is new only while it adds an edge
  shape (a bounded "scope", as in the paper);
* objects named by a per-type breadth-first numbering, never by address, so that permuting
  identities in one structure cannot fake coverage (the paper's Fig. 3) and the same
  graph built in another order or process is recognised;
* primitives abstracted into buckets (`int:small`, `str:empty`), so that random literals
  alone do not make every state look new. Oracles keep the exact values elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..runtime.sequence import CallSequence
from ..worker.protocol import SequenceResult
from .plugin import Plugin, PluginContext


class FieldNovelty:
    """The triples covered so far; `add` tells whether a sequence covered any new one."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.added = 0  # calls that covered at least one new triple
        self.redundant = 0  # calls that covered nothing new

    def add(self, triples: Iterable[str]) -> bool:
        """Remember `triples`; True when at least one of them was not covered before."""
        before = len(self.seen)
        self.seen.update(triples)
        new = len(self.seen) > before
        if new:
            self.added += 1
        else:
            self.redundant += 1
        return new

    def field_sizes(self) -> dict[str, int]:
        """Distinct triples per `Class.field` (root triples under their root name): the size
        of each field's semantics, which the paper's transcoping extrapolates to decide when
        generation has saturated."""
        sizes: dict[str, int] = {}
        for triple in self.seen:
            field = triple.split("|", 1)[0]
            sizes[field] = sizes.get(field, 0) + 1
        return dict(sorted(sizes.items()))

    def __len__(self) -> int:
        return len(self.seen)

    def __contains__(self, triple: object) -> bool:
        return triple in self.seen


class NoveltyPlugin(Plugin):
    """The technique `novelty`: a sequence's values extend the pools only when its object graphs
    add a field-coverage triple (state equality is the filter without it)."""

    judges_novelty = True

    def __init__(self, context: PluginContext) -> None:
        self.novelty = FieldNovelty()

    def admit(self, statements: CallSequence, result: SequenceResult) -> bool:
        return self.novelty.add(result.fields or ())
