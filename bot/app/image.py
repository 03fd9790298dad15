"""Builds difforacle's Docker image where no container registry is reachable.

`ensure_base_image` makes a minimal Debian root filesystem with debootstrap (python3, venv, git,
certificates) and imports it as a local image, once. `ensure_image` builds the repository's
Dockerfile on it, unless an image of that tag was already built from the same sources and base.
The project's dependencies go into a wheelhouse that pip fills on the host with the host's own
configuration (mirrors, proxies, certificates), so that the build itself needs no index: a
TLS-intercepting proxy or a file:// mirror would otherwise stop pip inside the build.

    difforacle app build-image [--tag T] [--base IMAGE] [--mirror URL] [--no-wheelhouse] [--rebuild]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
from docker.utils import parse_repository_tag
from docker.utils.build import exclude_paths

from .model import AppError
from .settings import BASE_TAG, DEFAULT_MIRROR

SUITE = "bookworm"  # Debian 12: python3 is 3.11, as the project requires
PACKAGES = ("python3", "python3-venv", "git", "ca-certificates")
SOURCE_LABEL = "difforacle.source"  # digest of the sources and base an image was built from
BUILDER_LABEL = "difforacle.stage=builder"  # the Dockerfile's builder stage carries it
WHEELHOUSE = "wheelhouse"  # its folder in the build context
TRIM = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
        "usr/share/locale", "dev")  # emptied: caches, documentation, and /dev (the engine makes its own)
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # pip colours its errors even in a build
Log = Callable[[str], None]


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def ensure_base_image(client: docker.DockerClient, tag: str = BASE_TAG, mirror: str = DEFAULT_MIRROR,
                      log: Log = lambda line: None) -> str:
    """`tag`, built from Debian packages by debootstrap and `docker import` unless it exists."""
    if image_exists(client, tag):
        log(f"base image {tag} exists")
        return tag
    if os.geteuid() != 0:
        raise AppError("building the base image needs root (debootstrap); run as root, or pass "
                         "--base with an existing image that has python3 >= 3.11, python3-venv and git")
    if not shutil.which("debootstrap"):
        raise AppError("debootstrap is not installed (apt-get install debootstrap)")
    with tempfile.TemporaryDirectory(prefix="difforacle-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        log(f"debootstrap {SUITE} from {mirror} (a minute or two)")
        _run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(rootfs),
              mirror], "debootstrap")
        _trim(rootfs)
        archive = Path(tmp) / "rootfs.tar"
        _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(archive), "."], "tar")
        repository, version = parse_repository_tag(tag)
        log(f"docker import as {tag}")
        client.api.import_image_from_file(
            str(archive), repository=repository, tag=version or "latest",
            changes=["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     "ENV LANG=C.UTF-8", 'CMD ["/bin/bash"]'])
    if not image_exists(client, tag):
        raise AppError(f"docker import did not create {tag}")
    return tag


def ensure_image(client: docker.DockerClient, tag: str, base: str, source: Path, wheelhouse: bool = True,
                 rebuild: bool = False, log: Log = lambda line: None) -> str:
    """The id of `tag` built from `source`'s Dockerfile on `base`, building it only when needed."""
    files = context_files(source)
    digest = _digest(source, files, client.images.get(base).id)
    try:
        current = client.images.get(tag)
    except docker.errors.ImageNotFound:
        current = None
    if current is not None and not rebuild and current.labels.get(SOURCE_LABEL) == digest:
        log(f"image {tag} is up to date")
        return current.id
    image_id = build_image(client, tag, base, source, files, digest, wheelhouse, log)
    with contextlib.suppress(docker.errors.APIError):  # builder stages of this and earlier builds
        client.images.prune(filters={"dangling": True, "label": BUILDER_LABEL})
    if current is not None and current.id != image_id:
        with contextlib.suppress(docker.errors.APIError):  # in use by a container, or tagged elsewhere
            client.images.remove(current.id)  # the previous build, now untagged
    return image_id


def build_image(client: docker.DockerClient, tag: str, base: str, source: Path, files: list[str], digest: str,
                wheelhouse: bool, log: Log) -> str:
    buildargs = {"BASE": base}
    with tempfile.TemporaryDirectory(prefix="difforacle-wheels-") as wheels:
        if wheelhouse and _same_python(client, base, log):
            log("filling the wheelhouse with pip on this machine")
            _fill_wheelhouse(client, base, source, Path(wheels), log)
            buildargs |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": f"/src/{WHEELHOUSE}"}
        else:
            buildargs |= {k: v for k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL") if (v := os.environ.get(k))}
        with tempfile.TemporaryFile() as context:
            _write_context(context, source, files, Path(wheels))
            context.seek(0)
            log(f"docker build -t {tag} --build-arg BASE={base}")
            return _build(client, context, tag, buildargs, digest, log)


def context_files(source: Path) -> list[str]:
    """The files of `source` that .dockerignore lets into the build, sorted."""
    if not (source / "Dockerfile").is_file():
        raise AppError(f"no Dockerfile in {source}: pass --source with difforacle's source tree")
    ignore = source / ".dockerignore"
    patterns = [line.strip() for line in ignore.read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")] if ignore.is_file() else []
    return sorted(p for p in exclude_paths(str(source), patterns) if (source / p).is_file()
                  and not (source / p).is_symlink() and p != ".dockerignore")


def default_source() -> Path:
    """difforacle's source tree when it is installed from one (editable), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "Dockerfile").is_file() else Path.cwd()


def _digest(source: Path, files: list[str], base_id: str) -> str:
    digest = hashlib.sha256(base_id.encode())
    for name in files:
        digest.update(name.encode() + b"\0" + (source / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _same_python(client: docker.DockerClient, base: str, log: Log) -> bool:
    """Whether wheels pip picks here fit the base image's python (same version and machine)."""
    probe = "import platform, sys; print('%d.%d' % sys.version_info[:2], platform.machine())"
    try:
        output = client.containers.run(base, ["python3", "-c", probe], remove=True, network_mode="none")
    except docker.errors.DockerException as exc:
        log(f"no wheelhouse: cannot run python3 in {base} ({exc})")
        return False
    here = f"{sys.version_info.major}.{sys.version_info.minor} {platform.machine()}"
    there = output.decode().strip()
    if there != here:
        log(f"no wheelhouse: {base} has python {there}, this machine {here}; pip in the build uses the index")
    return there == here


def _fill_wheelhouse(client: docker.DockerClient, base: str, source: Path, folder: Path, log: Log) -> None:
    """Wheels of the dependencies with the `app` extra (the Dockerfile installs `.[app]`) and of the
    build backend (the project itself builds from source).

    pip here evaluates markers for this interpreter, not the image's (redis wants async-timeout
    below Python 3.11.3 only), so pip in the base image checks the set and names what is missing.
    """
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    requirements = [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["app"],
                    *project["build-system"]["requires"], "wheel"]
    wanted = requirements
    for _ in range(8):
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--wheel-dir",
              str(folder), *wanted], "pip wheel")
        missing = _missing_wheels(client, base, folder, requirements)
        if not missing:
            return
        log(f"the image's python also needs: {', '.join(missing)}")
        wanted = missing
    raise AppError("the wheelhouse does not satisfy the base image's pip; try --no-wheelhouse")


def _missing_wheels(client: docker.DockerClient, base: str, folder: Path,
                    requirements: list[str]) -> list[str]:
    """What pip in `base` cannot find in `folder` for `requirements` (markers evaluated there)."""
    script = ('python3 -m venv /tmp/venv && exec /tmp/venv/bin/pip install --dry-run --quiet '
              '--disable-pip-version-check --no-index --find-links /wheels "$@"')
    try:
        client.containers.run(base, ["/bin/sh", "-c", script, "sh", *requirements], remove=True,
                              network_mode="none", volumes={str(folder): {"bind": "/wheels", "mode": "ro"}},
                              stdout=False, stderr=True)
    except docker.errors.ContainerError as exc:
        text = (exc.stderr or b"").decode(errors="replace")
        missing = re.findall(r"No matching distribution found for ([^;\n]+)", text)
        if not missing:
            raise AppError(f"pip in {base} rejects the wheelhouse: {text.strip()[-600:]}") from None
        return sorted({m.strip() for m in missing})
    return []


def _write_context(fileobj: io.IOBase, source: Path, files: list[str], wheels: Path) -> None:
    with tarfile.open(fileobj=fileobj, mode="w") as archive:
        for name in files:
            archive.add(source / name, arcname=name, recursive=False, filter=_anonymous)
        for wheel in sorted(wheels.iterdir()):
            archive.add(wheel, arcname=f"{WHEELHOUSE}/{wheel.name}", filter=_anonymous)


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _build(client: docker.DockerClient, context: io.IOBase, tag: str, buildargs: dict, digest: str,
           log: Log) -> str:
    lines: list[str] = []
    try:
        for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, buildargs=buildargs,
                                      labels={SOURCE_LABEL: digest}, rm=True, forcerm=True, pull=False,
                                      decode=True, timeout=1800):
            if "error" in chunk:
                tail = "".join(lines[-15:])
                raise AppError(f"docker build failed: {ANSI.sub('', chunk['error']).strip()}\n{tail}")
            text = ANSI.sub("", chunk.get("stream", ""))
            if text:
                lines.append(text)
                if text.strip():
                    log(text.rstrip())
    except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
        raise AppError(f"docker build failed: {exc}") from None
    return client.images.get(tag).id


def _trim(rootfs: Path) -> None:
    for relative in TRIM:
        folder = rootfs / relative
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
    for name in ("etc/resolv.conf", "etc/hostname"):  # the host's, copied by debootstrap; Docker sets its own
        (rootfs / name).unlink(missing_ok=True)


def _run(argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise AppError(f"{what} failed (exit status {result.returncode}):\n{tail}")


def run(args: argparse.Namespace) -> int:
    """The `app build-image` subcommand (its options: `command.py`); problems are AppErrors (one line
    for the user)."""
    log: Log = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise AppError(f"no Docker engine answers ({exc}); start dockerd") from None
    base = args.base or ensure_base_image(client, mirror=args.mirror, log=log)
    if not image_exists(client, base):
        raise AppError(f"the base image {base} does not exist here (docker pull it, or leave out --base)")
    ensure_image(client, args.tag, base, (args.source or default_source()).resolve(),
                 wheelhouse=not args.no_wheelhouse, rebuild=args.rebuild, log=log)
    print(args.tag)
    return 0
