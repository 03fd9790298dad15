"""difforacle's version, written in one place (pyproject.toml) and read from what is installed: the
command's `--version` and every JSON report name it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "difforacle"

try:
    VERSION = version(DISTRIBUTION)
except PackageNotFoundError:  # the sources on a path without the package installed
    VERSION = "0+unknown"
