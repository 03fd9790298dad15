"""Compiled extensions: built when the project says how, and the report says whether the compiled
code or a pure-Python fallback was tested (from what the workers actually imported)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.worker.introspect import compiled_modules

FAST = '''\
try:
    from pkg._speedups import double as _double
except ImportError:
    def _double(x: int) -> int:
        return x * 2


def twice(x: int) -> int:
    return _double(x)
'''
SETUP = ("from setuptools import Extension, setup\n\n"
         "setup(name='pkg', ext_modules=[Extension('pkg._speedups', ['src/speedups.c'])])\n")
SPEEDUPS_C = '''\
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *twice(PyObject *self, PyObject *arg) {
    long x = PyLong_AsLong(arg);
    if (x == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(x * FACTOR);
}

static PyMethodDef methods[] = {{"double", twice, METH_O, "x times the factor"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef speedups = {PyModuleDef_HEAD_INIT, "pkg._speedups", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&speedups); }
'''
BUILD = ("python setup.py -q build_ext --inplace",)


def _project(factor: int, fast: str = FAST, setup: str = SETUP) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/fast.py": fast, "setup.py": setup,
            "src/speedups.c": SPEEDUPS_C.replace("FACTOR", str(factor))}


def _extension_notes(builder: RepoBuilder, head: dict[str, str], **options: object) -> tuple[list[str], list]:
    """A pull request that changes the compiled double from x*2 to x*3 and `twice` in Python
    without a change of behaviour (`+ 0`)."""
    make_pr(builder, _project(2), {"pkg/fast.py": FAST.replace("_double(x)\n", "_double(x) + 0\n"), **head})
    report = run_analyze(builder, max_sequences=150, **options)
    notes = [note for note in report.notes if "compiled" in note or "build" in note.lower()]
    return notes, report.differences


def test_a_fallback_tested_instead_of_the_extension_is_said(builder: RepoBuilder) -> None:
    notes, differences = _extension_notes(builder, {"src/speedups.c": SPEEDUPS_C.replace("FACTOR", "3")})
    [note] = notes
    assert note.startswith("The project builds compiled extensions (C: src/speedups.c), but no compiled "
                           "module was imported")
    assert "Set `build` in [tool.difforacle]" in note
    assert differences == []  # the fallback is the same on both sides


@pytest.mark.slow  # compiles a C extension twice
def test_a_configured_build_tests_the_compiled_code(builder: RepoBuilder) -> None:
    notes, differences = _extension_notes(builder, {"src/speedups.c": SPEEDUPS_C.replace("FACTOR", "3")},
                                          build=BUILD)
    assert any(note.startswith("Built both checkouts with `python setup.py -q build_ext --inplace`")
               for note in notes), notes
    assert any("both commits imported their compiled modules (pkg._speedups)" in note
               for note in notes), notes
    assert [d.target for d in differences] == ["pkg.fast:twice"]
    [difference] = differences
    assert difference.kind == "return"


@pytest.mark.slow  # compiles a C extension
def test_a_build_that_fails_on_one_side_leaves_both_unbuilt(builder: RepoBuilder) -> None:
    broken = "#error head does not compile\n" + SPEEDUPS_C.replace("FACTOR", "3")
    notes, differences = _extension_notes(builder, {"src/speedups.c": broken}, build=BUILD)
    assert any(note.startswith("The build command `python setup.py -q build_ext --inplace` failed on head "
                               "(exit 1") and "both commits were tested without their builds" in note
               for note in notes), notes
    assert any("no compiled module was imported" in note for note in notes), notes
    assert differences == []  # never the compiled base against head's fallback


@pytest.mark.slow  # compiles a C extension twice
def test_a_side_that_cannot_import_its_build_is_said(builder: RepoBuilder) -> None:
    unlinked = SPEEDUPS_C.replace("FACTOR", "3").replace("return PyLong_", "return PyLongX_")  # undefined
    notes, _ = _extension_notes(builder, {"src/speedups.c": unlinked}, build=BUILD)
    assert any("only base imported compiled modules (pkg._speedups), head its pure-Python fallback" in note
               for note in notes), notes


def test_sources_no_build_declares_are_not_extensions(builder: RepoBuilder) -> None:
    plain = "from setuptools import setup\n\nsetup()\n"
    make_pr(builder, {**_project(2, setup=plain), "docs/example.c": "int main;\n"},
            {"pkg/fast.py": FAST.replace("x * 2", "x + x")})
    notes = run_analyze(builder, max_sequences=50).notes
    assert not [note for note in notes if "compiled" in note]


def test_compiled_modules_are_the_projects_loaded_extensions(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    suffix = ".cpython-311-x86_64-linux-gnu.so"
    package = tmp_path / "pkg"
    package.mkdir()

    def module(name: str, file: Path) -> None:
        value = types.ModuleType(name)
        value.__file__ = str(file)
        monkeypatch.setitem(sys.modules, name, value)

    module("pkg", package / "__init__.py")
    module("pkg._speedups", package / f"_speedups{suffix}")  # inside the package
    module("_pkg_native", tmp_path / f"_pkg_native{suffix}")  # beside it, at the import root
    module("pkg.pure", package / "pure.py")  # not compiled
    module("elsewhere_native", tmp_path / "site" / f"elsewhere_native{suffix}")  # not the project's
    assert compiled_modules({"pkg"}) == ["_pkg_native", "pkg._speedups"]
