"""Runs CrossHair's `cover` on one function of the project, inside the worker's sandbox.

The host (the generation search's `solver`) starts `boot.py solver OPTIONS_JSON` under the project's
interpreter when exploration leaves some branch of a changed function untaken. CrossHair comes
from difforacle's environment: the folder named by DIFFORACLE_SOLVER_PATH holds links to just it
and its dependencies, and is appended to `sys.path`, so the project's own packages always win.
The process gets the sandbox's limits and audit hook (no new processes, no network); the target's
module is imported first, as the worker imports it, and from then on the file system outside the
run's folders is refused. CrossHair prints the inputs it found to stdout, one argument dictionary
per path; the exit status says whether CrossHair itself could run. Standard library only (plus
the CrossHair it imports).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys

from . import sandbox

PATH_VARIABLE = "DIFFORACLE_SOLVER_PATH"
NO_SOLVER = 3  # exit status: CrossHair does not import under this interpreter (its error on stderr)


def main(argv: list[str]) -> int:
    """`argv[0]`: {"module", "target", "seconds", "path_seconds", "memory_mb", "cpu_seconds"}."""
    options = json.loads(argv[0])
    writable = sandbox.run_folders()
    found = os.environ.pop(PATH_VARIABLE, "")
    if found:
        sys.path.append(found)
    try:
        crosshair = importlib.import_module("crosshair.main")
    except Exception as exc:  # not installed, or built for another Python
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return NO_SOLVER
    sandbox.apply_limits(int(options["memory_mb"]), int(options["cpu_seconds"]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file size limit fails, not the run
    sandbox.install_audit_hook(None)
    importlib.import_module(options["module"])  # module bodies run unguarded, as in the worker
    sandbox.guard_file_system(writable)
    crosshair.main(["cover", "--example_output_format=arg_dictionary", "--coverage_type=path",
                    f"--per_condition_timeout={options['seconds']}",
                    f"--per_path_timeout={options['path_seconds']}", options["target"]])
    return 0  # CrossHair's main exits by itself
