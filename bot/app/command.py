"""`difforacle app serve | worker | run | build-image`: the App's web server, job worker, both, its image.

Configuration comes from DIFFORACLE_* environment variables only (`settings.py`); a missing
one is named in a one-line AppError (exit 2). The App's server parts (Flask, waitress, huey, redis,
docker) are the `app` extra: this module imports them, through the App's other modules, only when
a subcommand runs, so that the rest of the command line never loads them, and a missing one is a
one-line AppError saying what to install. The web server is waitress (a production WSGI
server, threads, pure Python); werkzeug's development server only if waitress is missing.
Until the App is registered, `serve` and `run` start anyway when the registration pages
exist, so that /setup can register it (the webhook answers 503 until then); the log gives the
page's address with the one-time token it asks for.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .model import AppError
from .settings import BASE_TAG, DEFAULT_IMAGE, DEFAULT_MIRROR, AppSettings, load_settings

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flask import Blueprint, Flask

    from .queue import JobQueue

log = logging.getLogger("difforacle.app")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_THREADS = 8
# the top-level packages of the `app` extra (werkzeug comes with Flask)
EXTRA_PACKAGES = frozenset({"docker", "flask", "huey", "redis", "waitress", "werkzeug"})
INSTALL_EXTRA = "pip install 'difforacle[app]'"
ENVIRONMENT = """configuration (environment variables):
  DIFFORACLE_WEBHOOK_SECRET         the App's webhook secret (serve, run)
  DIFFORACLE_APP_ID                 the App's id (worker, run)
  DIFFORACLE_PRIVATE_KEY[_FILE]     the App's private key, PEM, or a file holding it (worker, run)
  DIFFORACLE_QUEUE_URL              sqlite:///path (default: in DIFFORACLE_DATA_DIR) or redis://host:port/db
  DIFFORACLE_DATA_DIR               where the queue and the registered credentials live
  DIFFORACLE_WORKERS                jobs a worker runs at once (default: 1)
  DIFFORACLE_LEASE_SECONDS          a job whose worker died runs again after this long (default: 60)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands and options of `difforacle app` (its parser: `commands.command_parser`)."""
    parser.description, parser.epilog = "Run the difforacle GitHub App.", ENVIRONMENT
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="app_command", required=True, parser_class=type(parser))
    serve = sub.add_parser("serve", help="the webhook server (enqueues jobs for workers)")
    sub.add_parser("worker", help="a job worker (many may share a Redis queue)")
    both = sub.add_parser("run", help="the webhook server and a worker in one process (embedded queue)")
    _add_build_image_parser(sub)
    for web in (serve, both):
        web.add_argument("--host", default=DEFAULT_HOST,
                         help=f"address to listen on (default: {DEFAULT_HOST})")
        web.add_argument("--port", type=_port, default=DEFAULT_PORT,
                         help=f"port to listen on, 0 for any free one (default: {DEFAULT_PORT})")
        web.add_argument("--threads", type=_threads, default=DEFAULT_THREADS,
                         help=f"requests served at once (default: {DEFAULT_THREADS})")


def _add_build_image_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("build-image", help="build difforacle's Docker image without a registry")
    parser.add_argument("--tag", default=DEFAULT_IMAGE, help=f"the image to build (default: {DEFAULT_IMAGE})")
    parser.add_argument("--base", help=f"an existing base image (default: {BASE_TAG}, made by debootstrap)")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help=f"Debian mirror for debootstrap "
                        f"(default: {DEFAULT_MIRROR})")
    parser.add_argument("--source", type=Path, help="difforacle's source tree (default: the installed one)")
    parser.add_argument("--no-wheelhouse", action="store_true",
                        help="let pip inside the build use its index instead of wheels pip gathers here")
    parser.add_argument("--rebuild", action="store_true", help="build even if the image is up to date")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    """The `app` subcommand (errors are AppErrors, reported by `bot.cli.main`); a package of the
    `app` extra that is not installed is one of them, naming what to install."""
    try:
        return _run(args, environ)
    except ImportError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in EXTRA_PACKAGES:
            raise
        raise AppError(f"the GitHub App needs {missing}, which is not installed: {INSTALL_EXTRA}") from None


def _run(args: argparse.Namespace, environ: Mapping[str, str] | None) -> int:
    if args.app_command == "build-image":
        from . import image

        return image.run(args)
    settings = load_settings(environ)
    configure_logging()
    if args.app_command == "worker":
        settings.require("worker")
        run_worker(_open_queue(settings))
        return 0
    blueprints = registration_blueprints(settings)
    roles = ("web",) if args.app_command == "serve" else ("web", "worker")
    unregistered = settings.webhook_secret is None and bool(blueprints)
    if not unregistered:
        settings.require(*roles)
    queue = _open_queue(settings)
    server = WebServer(create_web_app(settings, queue, blueprints), args.host, args.port, args.threads)
    if unregistered:
        from .registration import setup_token

        log.warning("the App is not registered yet: open http://%s:%d/setup?token=%s to register it "
                    "(the token works once; put TLS in front of this server before exposing it)",
                    server.host, server.port, setup_token(settings))
    if args.app_command == "serve":
        server.run()
        return 0
    web = threading.Thread(target=server.run, name="difforacle-web", daemon=True)
    web.start()
    try:
        run_worker(queue)
    finally:
        server.close()
    return 0


def registration_blueprints(settings: AppSettings) -> list[Blueprint]:
    """The registration pages (`registration.py`), if that module is installed."""
    name = f"{__package__}.registration"
    if importlib.util.find_spec(name) is None:
        return []
    return [importlib.import_module(name).blueprint(settings)]


def create_web_app(settings: AppSettings, queue: JobQueue, blueprints: list[Blueprint]) -> Flask:
    from .webhook import create_app

    return create_app(settings, queue, blueprints)


def run_worker(queue: JobQueue) -> None:
    """A huey consumer in this thread (it handles SIGTERM: finish running jobs, then stop),
    with the recovery of jobs whose worker died, at start and then every half lease, after
    removing the work directories such workers left behind."""
    from .queue import Recovery
    from .runner import sweep_stale_work

    if swept := sweep_stale_work(queue.settings):
        log.info("worker: removed %d work folder(s) left by killed workers", swept)
    _remove_leftover_containers(queue.settings)
    consumer = queue.consumer()
    recovery = Recovery(queue)
    recovery.start()
    log.info("worker: %d job(s) at once, queue %s", queue.settings.workers, queue.kind)
    try:
        consumer.run()
    finally:
        recovery.stop()


def _remove_leftover_containers(settings: AppSettings) -> None:
    """Stopped sandbox containers of killed workers (the in-container timeout ended them)."""
    from .sandbox import SandboxError
    from .sandbox_choice import select_sandbox

    if settings.sandbox == "bubblewrap":
        return
    try:
        sandbox = select_sandbox("docker", settings.image)
    except SandboxError:
        return  # no Docker here: nothing was left in it; the job's own check says what is missing
    if removed := sandbox.remove_leftovers():  # type: ignore[attr-defined]
        log.info("worker: removed %d stopped sandbox container(s) left by killed workers", removed)


class WebServer:
    """waitress when installed (production), else werkzeug's threaded server (development only)."""

    def __init__(self, app: Flask, host: str, port: int, threads: int) -> None:
        try:
            from waitress.server import create_server
        except ModuleNotFoundError:
            create_server = None
        try:
            if create_server is not None:
                self._server = create_server(app, host=host, port=port, threads=threads, ident="difforacle")
                self.port = int(self._server.effective_port)
            else:
                from werkzeug.serving import make_server

                log.warning("waitress is not installed: using werkzeug's development server")
                self._server = make_server(host, port, app, threaded=True)
                self.port = int(self._server.server_port)
        except OSError as exc:
            raise AppError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.waitress = create_server is not None
        self.host = host

    def run(self) -> None:
        log.info("listening on http://%s:%d (webhook: /webhook, health: /healthz)", self.host, self.port)
        if self.waitress:
            self._server.run()
        else:
            self._server.serve_forever()

    def close(self) -> None:
        if self.waitress:
            self._server.close()
        else:
            self._server.shutdown()


def _open_queue(settings: AppSettings) -> JobQueue:
    from .queue import JobQueue, describe_queue

    queue = JobQueue(settings)
    queue.check()
    log.info("queue: %s", describe_queue(settings.queue_url))
    return queue


def configure_logging() -> None:
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be from 0 to 65535")
    return value


def _threads(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
