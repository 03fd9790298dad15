"""The report written to files: its JSON and its tests, each atomically and without a timestamp, so
runs can be compared and published again without spurious changes."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

from .json_form import report_to_json, validate_report
from .model import Difference, Report

_SLUG_LIMIT = 60



def write_json(report: Report, path: str | os.PathLike[str]) -> None:
    """Validate, then write the JSON report atomically so readers never see half a file."""
    data = report_to_json(report)
    validate_report(data)
    write_atomic(Path(path), json.dumps(data, indent=2, ensure_ascii=False) + "\n")



def write_atomic(path: Path, text: str, mode: int = 0o666) -> None:
    """Write UTF-8 text through a temporary file in the same folder and `os.replace` it into place.

    The temporary file is made with `os.open(..., mode)`: by default the usual umask-derived
    permissions rather than the private ones of `tempfile`; 0o600 for secrets, which are then
    never readable by others, not even for a moment.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with open(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise



def write_tests(report: Report, directory: str | os.PathLike[str]) -> list[Path]:
    """Write each difference's tests to files: `pin_base` (the regression test, fails on head) and,
    when there is one, `pin_head` (the test to keep if the change was intended, passes on head).
    Other files in `directory` are left alone."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, difference in enumerate(report.differences, start=1):
        flavours = [("", difference.pin_base), ("_pin_head", difference.pin_head)]
        for suffix, source in flavours:
            if source is None:
                continue
            path = folder / difference_filename(number, difference).replace(".py", f"{suffix}.py")
            write_atomic(path, source.rstrip() + "\n")
            paths.append(path)
    return paths



def difference_filename(number: int, difference: Difference) -> str:
    """`test_difforacle_<nnn>_<slug>.py`: pytest collects it, and the name says what differs."""
    return f"test_difforacle_{number:03d}_{_slug(f'{difference.kind}_{difference.target}')}.py"



def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return slug[:_SLUG_LIMIT].rstrip("_") or "difference"
