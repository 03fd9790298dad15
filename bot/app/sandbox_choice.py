"""Choosing the sandbox a worker runs untrusted code in: Docker when an engine answers and has the
image, else bubblewrap (`DIFFORACLE_SANDBOX`: auto, docker or bubblewrap).

Apart from the sandboxes' shared types (`sandbox.py`) so that those modules never import each
other in a circle; the docker SDK is imported only when Docker is asked for.
"""

from __future__ import annotations

from .sandbox import Sandbox, SandboxUnavailable
from .sandbox_bwrap import BubblewrapSandbox


def select_sandbox(preference: str, image: str) -> Sandbox:
    """The sandbox `preference` names ("auto", "docker", "bubblewrap"), ready to run.

    "auto" takes Docker when an engine answers and has `image`, else bubblewrap; SandboxUnavailable
    says what is missing and what to install when neither can run.
    """
    if preference == "docker":
        return _docker(image)
    if preference == "bubblewrap":
        return _bubblewrap()
    if preference != "auto":
        raise SandboxUnavailable(f"unknown sandbox {preference!r}: use auto, docker or bubblewrap")
    try:
        return _docker(image)
    except SandboxUnavailable as docker_problem:
        try:
            return _bubblewrap()
        except SandboxUnavailable as bwrap_problem:
            raise SandboxUnavailable(
                f"no sandbox can run untrusted code here. Docker: {docker_problem} "
                f"Bubblewrap: {bwrap_problem} "
                "Install a Docker engine and build the image (difforacle app build-image), or install "
                "bubblewrap (apt-get install bubblewrap util-linux)") from None


def _docker(image: str) -> Sandbox:
    try:
        from .sandbox_docker import DockerSandbox
    except ImportError as exc:
        raise SandboxUnavailable(f"the docker SDK is not installed ({exc})") from None
    return DockerSandbox(image)


def _bubblewrap() -> Sandbox:
    return BubblewrapSandbox()
