"""Tests for `difforacle.generator.worker.probe`: coverage.py restricted to the changed files, in
the worker."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from difforacle.generator.worker.probe import UNATTRIBUTED, CoverageProbe

SOURCE = textwrap.dedent('''\
    def classify(x):
        if x > 10:
            return "big"
        return "small"


    def untouched(x):
        return x
''')


@pytest.fixture
def module(tmp_path: Path) -> Iterator[tuple[object, str]]:
    name = "dor_probe_target"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(name), str(path)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_lines_and_raw_arcs_of_the_changed_file(module: tuple) -> None:
    mod, path = module
    probe = CoverageProbe({path: [2, 3]})
    assert probe.available and probe.version
    probe.start()
    mod.classify(50)
    mod.untouched(1)
    ran = probe.stop()
    assert ran["covered"] == [[UNATTRIBUTED, path, 2], [UNATTRIBUTED, path, 3]]
    arcs = {(a, b) for file, a, b in ran["arcs"] if file == path}
    assert (2, 3) in arcs and (2, 4) not in arcs  # the branch not taken
    probe.start()  # each measurement starts afresh
    mod.classify(1)
    assert [line for _, _, line in probe.stop()["covered"]] == [2]


def test_per_statement_runs_say_which_statement_ran_a_line(module: tuple) -> None:
    mod, path = module
    probe = CoverageProbe({path: [2, 3, 4]})
    probe.start(per_statement=True)
    mod.classify(1)
    probe.statement(1)
    mod.classify(50)
    covered = probe.stop()["covered"]
    assert [0, path, 4] in covered and [1, path, 3] in covered
    assert [0, path, 3] not in covered and [1, path, 4] not in covered


def test_with_branching_lines_each_sequence_reports_its_own_arcs_out_of_them(module: tuple) -> None:
    mod, path = module
    probe = CoverageProbe({path: [2, 3, 4]})
    probe.start(branching={path: [2]})
    probe.sequence(0)
    mod.classify(50)
    probe.sequence(1)
    mod.untouched(1)  # no arc out of line 2: absent
    probe.sequence(2)
    mod.classify(1)
    mod.classify(2)
    ran = probe.stop()
    assert ran["paths"] == {"0": [[path, 2, 3]], "2": [[path, 2, 4]]}
    assert {(a, b) for _, a, b in ran["arcs"]} >= {(2, 3), (2, 4)}  # the whole run's arcs as before
    probe.start()  # without branching lines: no paths, and no contexts switched
    probe.sequence(0)
    mod.classify(1)
    assert "paths" not in probe.stop()


def test_without_coverage_py_nothing_is_measured_and_the_reason_is_given(
        module: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    _, path = module
    monkeypatch.setitem(sys.modules, "coverage", None)  # import coverage -> ImportError
    probe = CoverageProbe({path: [2]}, fallback_path=None)
    assert not probe.available
    assert "not installed" in (probe.error or "")
    probe.start()
    assert probe.stop() == {}
