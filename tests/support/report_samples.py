"""A sample Report shared by the tests of its JSON form and files (tests/report/) and of its
Markdown (tests/bot/test_markdown.py): four differences of every shape, coverage with lines not run, stats
and a note."""

from __future__ import annotations

from difforacle.generator.report.model import Coverage, Difference, Report, Statement, Stats

BASE = "0123456789abcdef0123456789abcdef01234567"
HEAD = "fedcba9876543210fedcba9876543210fedcba98"
TEST_SOURCE = "def test_x():\n    assert 1 == 1\n"


def sample_difference(number: int, **changes: object) -> Difference:
    fields: dict = {
        "id": f"d{number}",
        "kind": "return",
        "target": "pkg.mod:Cache.get",
        "path": "pkg/mod.py",
        "line": 12,
        "base": "1",
        "head": "2",
        "test": TEST_SOURCE.replace("test_x", f"test_x{number}"),
        "key": "s0.return",
        "statements": [Statement("pkg.mod:Cache"), Statement("pkg.mod:Cache.get", ({"ref": 0},))],
    }
    fields.update(changes)
    return Difference(**fields)


def sample_report() -> Report:
    return Report(
        base=BASE,
        head=HEAD,
        differences=[
            sample_difference(1, count=3),
            sample_difference(
                2,
                kind="exception",
                target="pkg.mod:Cache.__setitem__",
                base="None",
                head="KeyError('a`b')",
            ),
            sample_difference(3, kind="api", target="pkg.util:<module>", path=None, line=None, statements=[]),
            sample_difference(4, kind="state", head="x" * 500),
        ],
        coverage=Coverage(
            changed_lines=20, changed_lines_covered=13, uncovered={"pkg/mod.py": [14, 10, 11, 12, 3, 13, 30]}
        ),
        stats=Stats(sequences=1200, seconds=12.3456, sequences_per_second=97.2, kept=40, crashed=1,
                    techniques={"influence": {"candidates": 30, "pruned_share": 0.25},
                                "duck": {"parameters": 2}}),
        notes=["Skipped non-Python file docs/index.md"],
    )


def json_difference(number: int, **fields: object) -> dict:
    """A difference in the report's JSON form (a return of `parse`), with `fields` changed."""
    base = {"id": f"D{number}", "kind": "return", "target": "pkg.parse:parse", "path": "pkg/parse.py",
            "line": 12, "side": "head", "base": "3600", "head": "3660",
            "test": "def test_parse():\n    assert parse('1h') == 3600\n"}
    base["pin_base"] = base["test"]
    return {**base, **fields}
