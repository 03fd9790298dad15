"""Packages of difforacle's environment lent to the project's interpreter, which may lack them:
pytest for carving and for reproducing the suggested tests, CrossHair for the solver."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

PYTEST_BOOT = Path(__file__).parents[1] / "worker" / "pytest_boot.py"



FALLBACK_VARIABLE = "DIFFORACLE_PYTEST_FALLBACK"  # read by pytest_boot.py



# pytest and what it imports (some lazily or on older Pythons only), linked from difforacle's environment
# for an interpreter that has no pytest of its own.
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments",
                   "exceptiongroup", "tomli")



def link_pytest(folder: Path) -> None:
    """Links to difforacle's own pytest and its dependencies, and nothing else from this environment."""
    link_packages(folder, PYTEST_PACKAGES)



def link_packages(folder: Path, names: Iterable[str]) -> None:
    """Links in `folder` to the top-level packages and modules `names` of difforacle's environment
    (those it lacks are left out): appended to the project's path, they expose nothing else."""
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            source = Path(next(iter(spec.submodule_search_locations)))
        elif spec.origin and spec.has_location:
            source = Path(spec.origin)
        else:
            continue
        with suppress(OSError):  # without it, an interpreter lacking pytest reports that as the problem
            (folder / source.name).symlink_to(source)
