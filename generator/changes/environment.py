"""The environment the project's code runs with: what an interpreter needs, never the host's secrets.

The project under test is untrusted: its imports, its tests and its build commands run with
whatever environment they are given, and a CI job's environment holds tokens (`GITHUB_TOKEN`, cloud
credentials, a registry's password). So the project's code gets an allow-list, not the host's
environment less a few names: the command search path, the locale and time zone, the terminal's
type, the variables that make the interpreter itself work (a virtual environment's, conda's,
pyenv's shims', the dynamic loader's path), and the names the project's settings ask for
(`pass-env` in `[tool.difforacle]`, kept on each `Checkout`). The callers add what they set
themselves (`PYTHONPATH`, `HOME` and `TMPDIR` in a scratch folder, the hash seed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

PASSED = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "NO_COLOR",
    # the interpreter's own: a virtual environment, conda, pyenv's shims, the dynamic loader
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_ROOT", "PYENV_VERSION", "PYENV_DIR",
    "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
    # Windows needs these to start a process at all
    "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT",
})
PASSED_PREFIXES = ("LC_",)  # the locale's categories


def project_environment(allowed: Iterable[str] = (),
                        environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The host's variables the project's code may see (see the module): `PASSED`, the locale's
    `LC_*`, and `allowed` (the names the project's settings pass on)."""
    extra = frozenset(allowed)
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items()
            if name in PASSED or name.startswith(PASSED_PREFIXES) or name in extra}
