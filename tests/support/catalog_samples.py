"""A small module of durations and timers (`SOURCE`, imported as `MOD`), the catalog a worker
lists for it (`CATALOG`), and `real_catalog`, the catalog a worker lists for any source: shared by
the tests of the catalog, of the impact analysis and of what the catalog lists."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from difforacle.generator.runtime.catalog import Catalog
from difforacle.generator.worker.introspect import build_catalog

MOD = "durations"
SOURCE = textwrap.dedent('''
    def _unit_seconds(unit):
        return {"s": 1, "m": 60, "h": 3600}[unit]


    def _split(text):
        return text[:-1], _unit_seconds(text[-1])


    def parse_duration(text):
        number, seconds = _split(text)
        return int(number) * seconds


    def describe(text):
        return f"{parse_duration(text)} seconds"


    def unrelated(x):
        return x + 1


    class Timer:
        def __init__(self, limit):
            self.limit = limit

        def expired(self, elapsed):
            return elapsed > self._grace()

        def _grace(self):
            return self.limit * 2

        def remaining(self, elapsed):
            return self.limit - elapsed


    class Clock:
        def __init__(self):
            self.now = 0

        def tick(self):
            self.now += 1

        def read(self):
            return self.now

        @staticmethod
        def zero():
            return Clock()


    class Other:
        def method(self):
            return 1
''')


def _op(qualname: str, kind: str, owner: str | None = None) -> dict:
    return {"id": f"{MOD}:{qualname}", "kind": kind, "owner": f"{MOD}.{owner}" if owner else None,
            "params": [{"name": "x", "kind": "POSITIONAL_OR_KEYWORD", "has_default": False,
                        "hints": ["builtins.int"], "choices": [["int", 1], ["int", 2]]}],
            "returns": ["builtins.int"], "file": f"/src/{MOD}.py", "line": 3, "end": 4}


CATALOG = {
    "operations": [
        _op("parse_duration", "function"), _op("describe", "function"), _op("unrelated", "function"),
        _op("Timer", "constructor", "Timer"), _op("Timer.expired", "method", "Timer"),
        _op("Timer.remaining", "method", "Timer"),
        _op("Clock", "constructor", "Clock"), _op("Clock.tick", "method", "Clock"),
        _op("Clock.read", "method", "Clock"), _op("Clock.zero", "static", "Clock"),
        _op("Other", "constructor", "Other"), _op("Other.method", "method", "Other"),
    ],
    "classes": {f"{MOD}.{name}": {"mro": [f"{MOD}.{name}"], "abstract": False}
                for name in ("Timer", "Clock", "Other")},
    "import_errors": {"broken": "SyntaxError: invalid syntax"},
}


def real_catalog(tmp_path: Path, name: str, source: str) -> Catalog:
    """The catalog a worker lists for `source` imported as module `name`."""
    (tmp_path / f"{name}.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        return Catalog.from_json(build_catalog([name]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
