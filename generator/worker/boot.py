"""Entry point of the worker process, run as a script under the project's interpreter
(`boot.py`), or of the solver's (`boot.py solver OPTIONS_JSON`: `solver.py`).

It loads the worker's modules under a private package name so that a project module
called `generator`, `bot`, `observe`, ... is never shadowed, and drops its own folder
from `sys.path` before any project code is imported. Standard library only. An interpreter
older than the worker supports is told so before anything else is read (even Python 2 reads this
far), and the host turns that line into its message (`runtime/workers.py`).
"""

import sys

OLDEST = (3, 9)  # the oldest interpreter the worker runs under (compat.py: what it stands in for)
TOO_OLD = "difforacle-worker: needs Python %d.%d or later, not" % OLDEST  # noqa: UP031 - Python 2 reads this file
TOO_OLD_STATUS = 3

if __name__ == "__main__" and sys.version_info[:2] < OLDEST:
    sys.stderr.write(TOO_OLD + " " + sys.version.split()[0] + "\n")
    sys.exit(TOO_OLD_STATUS)

import importlib.util  # noqa: E402 - after the version check
import os  # noqa: E402

PACKAGE = "_difforacle_worker"


def _load_private_package():  # no annotations: an older interpreter must still read this file
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
