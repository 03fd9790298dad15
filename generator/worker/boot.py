"""Entry point of the worker process, run as a script under the project's interpreter
(`boot.py`), or of the solver's (`boot.py solver OPTIONS_JSON`: `solver.py`).

It loads the worker's modules under a private package name so that a project module
called `generator`, `bot`, `observe`, ... is never shadowed, and drops its own folder
from `sys.path` before any project code is imported. Standard library only.
"""

import importlib.util
import os
import sys

PACKAGE = "_difforacle_worker"


def _load_private_package() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(here, "__init__.py"), submodule_search_locations=[here])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)


if __name__ == "__main__":
    _load_private_package()
    if sys.argv[1:2] == ["solver"]:
        sys.exit(importlib.import_module(PACKAGE + ".solver").main(sys.argv[2:]))
    importlib.import_module(PACKAGE + ".server").serve()
