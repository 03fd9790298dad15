"""Runs CrossHair on one function of the project, inside the worker's sandbox: `cover` (inputs for
its paths) or, given head's file of its module, `diffbehavior` (inputs on which base's and head's
versions of it differ).

The host (the generation search's `solver`) starts `boot.py solver OPTIONS_JSON` under the project's
interpreter when exploration leaves some branch of a changed function untaken. CrossHair comes
from difforacle's environment: the folder named by DIFFORACLE_SOLVER_PATH holds links to just it
and its dependencies, and is appended to `sys.path`, so the project's own packages always win.
The process gets the sandbox's limits and audit hook (no new processes, no network); the target's
module is imported first, as the worker imports it, and from then on the file system outside the
run's folders is refused. CrossHair prints the inputs it found to stdout, one argument dictionary
per path; the exit status says whether CrossHair itself could run. Standard library only (plus
the CrossHair it imports).

For `diffbehavior` the process runs on base's checkout and loads head's file of the module beside
it, as `HEAD_MODULE` of the same package: its relative imports find base's other modules, which
is exact for a change to one module and an approximation otherwise. What CrossHair finds is only
a seed: the replay on the two real checkouts decides whether anything differs.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import signal
import sys
import types

from . import sandbox

PATH_VARIABLE = "DIFFORACLE_SOLVER_PATH"
NO_SOLVER = 3  # exit status: CrossHair does not import under this interpreter (its error on stderr)
NO_HEAD = 4  # exit status: head's file of the module does not load beside base's package (error on stderr)
HEAD_MODULE = "__difforacle_head__"  # the name head's version of the module is loaded under


def main(argv: list[str]) -> int:
    """`argv[0]`: {"module", "target", "seconds", "path_seconds", "memory_mb", "cpu_seconds"}, and
    "head_file" (head's file of the module) to ask `diffbehavior` instead of `cover`."""
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
    module = importlib.import_module(options["module"])  # module bodies run unguarded, as in the worker
    timeouts = [f"--per_condition_timeout={options['seconds']}",
                f"--per_path_timeout={options['path_seconds']}"]
    if "head_file" not in options:
        sandbox.guard_file_system(writable)
        crosshair.main(["cover", "--example_output_format=arg_dictionary", "--coverage_type=path", *timeouts,
                        options["target"]])
        return 0  # CrossHair's main exits by itself
    try:
        head = _load_beside(module, options["head_file"])
    except Exception as exc:  # head's module needs what base's package lacks, or fails to import
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return NO_HEAD
    sandbox.guard_file_system(writable)
    qualname = options["target"].removeprefix(options["module"] + ".")
    # an exception's message is not compared: a differing message alone is a minor difference
    crosshair.main(["diffbehavior", "--exception_equivalence=SAME_TYPE", *timeouts, options["target"],
                    f"{head}.{qualname}"])
    return 0


def _load_beside(module: types.ModuleType, path: str) -> str:
    """Load the file at `path` as a sibling of `module` named HEAD_MODULE; its name."""
    package = module.__spec__.parent if module.__spec__ is not None else ""
    name = f"{package}.{HEAD_MODULE}" if package else HEAD_MODULE
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module can be loaded from {path}")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return name
