"""Sequence keys: the text a sequence is looked up by, and its prefixes' (carving's sources)."""

from __future__ import annotations

from difforacle.generator.runtime.sequence import prefix_keys, sequence_key


def test_the_prefix_keys_are_the_keys_of_the_prefixes() -> None:
    statements = [{"op": "pkg.mod:Meter", "args": [{"lit": ["str", 'a "quoted" \u00e9']}], "kwargs": {}},
                  {"op": "pkg.mod:Meter.add", "args": [{"ref": 0}], "kwargs": {"by": {"lit": ["int", 2]}}}]
    assert list(prefix_keys(statements)) == [sequence_key(statements[:1]), sequence_key(statements)]
    assert list(prefix_keys([])) == []
