"""The tests' fixtures and hooks. The helpers they share are in the `support` package (on the path
through the `pythonpath` setting in pyproject.toml): `support.repos` builds throwaway git
repositories, `support.analysis` runs the engine on them, `support.command_line` runs the
`difforacle` command, `support.services` skips a test whose service is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The support modules' assertions (assert_one_line_error, ...) explain their failures as the tests' do.
pytest.register_assert_rewrite("support")

from support.repos import RepoBuilder  # noqa: E402
from support.services import TEST_IMAGE, service_unavailable  # noqa: E402

from difforacle.generator import SetupError  # noqa: E402


@pytest.fixture
def builder(tmp_path: Path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")


@pytest.fixture(scope="session")
def bubblewrap() -> object:
    """The App's bubblewrap sandbox here: skip (fail under CI) when bubblewrap cannot run."""
    from difforacle.bot.app.sandbox import SandboxUnavailable
    from difforacle.bot.app.sandbox_choice import select_sandbox

    try:
        return select_sandbox("bubblewrap", TEST_IMAGE)
    except SandboxUnavailable as exc:
        service_unavailable("the bubblewrap sandbox", f"{exc} (image {TEST_IMAGE})")


@pytest.fixture(scope="session")
def docker_client():  # -> docker.DockerClient (imported lazily: most tests need no Docker)
    import docker

    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # any failure to reach the engine means: no Docker here
        service_unavailable("a Docker engine", exc)
    return client


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    """TEST_IMAGE built from this tree on the debootstrap base; reused while the sources are unchanged."""
    from difforacle.bot.app.image import default_source, ensure_base_image, ensure_image

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        base = ensure_base_image(docker_client, log=log)
        ensure_image(docker_client, TEST_IMAGE, base, default_source(), log=log)
    except SetupError as exc:
        pytest.fail(f"cannot build the sandbox image: {exc}", pytrace=False)
    return TEST_IMAGE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the Docker sandbox need the image built from this tree (minutes on a fresh machine,
    a minute and more whenever the sources changed): they are slow, whatever they do."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_docker = callspec is not None and "docker" in callspec.params.values()
        if on_docker or "sandbox_image" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
