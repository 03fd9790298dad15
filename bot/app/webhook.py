"""The webhook receiver: verifies GitHub's signature, records, enqueues, answers at once.

GitHub waits 10 seconds for an answer and does not retry on its own, so the receiver never
does the work: it records the delivery and the pull request's new head in the queue's
storage, enqueues the job and answers 202 (`events.py` decides what a delivery asks for).

    202  jobs queued                      401  missing or bad X-Hub-Signature-256
    200  recognised, nothing to run       400  malformed JSON, headers or payload
         (ping, installation, draft,      413  body over DIFFORACLE_MAX_BODY
         duplicate delivery, ...)         503  queue unreachable, or the App not registered yet
    204  an event or action we ignore
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from flask import Blueprint, Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from .events import BadPayload, Route, route
from .model import AppError
from .queue import JobQueue
from .settings import AppSettings, with_stored_credentials

log = logging.getLogger("difforacle.app")

WEBHOOK_PATH = "/webhook"  # the URL path GitHub posts to (the manifest's hook_attributes.url)
HEALTH_PATH = "/healthz"
DELIVERY_ID = re.compile(r"[A-Za-z0-9-]{1,100}")  # a GUID, as GitHub sends it


def signature(secret: str, body: bytes) -> str:
    """The X-Hub-Signature-256 value GitHub sends for `body`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """HMAC-SHA256 of the raw body, compared in constant time."""
    if not header:
        return False
    return hmac.compare_digest(signature(secret, body).encode(), header.encode("utf-8", "surrogateescape"))


def create_app(settings: AppSettings, queue: JobQueue | None = None,
               blueprints: Iterable[Blueprint] = ()) -> Flask:
    """The web application: POST /webhook, GET /healthz, and the blueprints given (registration)."""
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body  # werkzeug answers 413 past it, even chunked
    receiver = Receiver(settings, queue or JobQueue(settings))
    app.extensions["difforacle"] = receiver
    app.add_url_rule(WEBHOOK_PATH, "webhook", receiver.receive, methods=["POST"])
    app.add_url_rule(HEALTH_PATH, "healthz", receiver.health, methods=["GET"])
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(RequestEntityTooLarge, lambda _: _answer(
        413, error=f"the body is larger than {settings.max_body} bytes (DIFFORACLE_MAX_BODY)"))
    for blueprint in blueprints:
        app.register_blueprint(blueprint)
    return app


def _http_error(error: HTTPException) -> tuple[Response, int]:
    return jsonify(error=error.description), error.code or 500


def _answer(code: int, **body: Any) -> tuple[Response, int]:
    return jsonify(body), code


class Receiver:
    """The two views, bound to the settings and the queue."""

    def __init__(self, settings: AppSettings, queue: JobQueue) -> None:
        self.settings = settings
        self.queue = queue
        self.state = queue.state
        self._secret = settings.webhook_secret

    def secret(self) -> str | None:
        """The webhook secret; before the App is registered, re-read from what /setup stores."""
        if self._secret is None:
            try:
                self._secret = with_stored_credentials(self.settings).webhook_secret
            except AppError as exc:
                log.error("%s", exc)
        return self._secret

    def receive(self) -> tuple[Response, int] | Response:
        body = request.get_data(cache=False)
        secret = self.secret()
        if secret is None:
            return _answer(503, error="the App is not registered yet: open /setup on this server, or set "
                                      "DIFFORACLE_WEBHOOK_SECRET")
        if not verify_signature(secret, body, request.headers.get("X-Hub-Signature-256")):
            return _answer(401, error="missing or bad X-Hub-Signature-256")
        event = request.headers.get("X-GitHub-Event", "")
        delivery = request.headers.get("X-GitHub-Delivery", "")
        if not event or not DELIVERY_ID.fullmatch(delivery):
            return _answer(400, error="missing X-GitHub-Event, or missing or malformed X-GitHub-Delivery")
        try:
            payload = json.loads(body)
        except ValueError:
            return _answer(400, error="the body is not JSON")
        if not isinstance(payload, dict):
            return _answer(400, error="the body is not a JSON object")
        try:
            decision = route(event, payload, delivery, self.state.latest_job)
            if decision.kind == "run":  # a signature covers the body, not the delivery id
                first = self.state.claim_body(hashlib.sha256(body).hexdigest()[:40], delivery)
                if first is not None:
                    log.warning("delivery %s: the body of delivery %s again: ignored", delivery, first)
                    return _answer(200, status="replayed", delivery=first)
            return self._dispatch(decision, event, payload, delivery)
        except BadPayload as exc:
            return _answer(400, error=str(exc))
        except Exception as exc:  # the queue's storage is down: GitHub shows the failure, redeliver later
            log.error("delivery %s: the queue is unavailable: %s: %s", delivery, type(exc).__name__,
                      (str(exc).splitlines() or [""])[0])
            return _answer(503, error="the queue is unavailable; redeliver later")

    def _dispatch(self, decision: Route, event: str, payload: dict[str, Any],
                  delivery: str) -> tuple[Response, int] | Response:
        state = self.state
        if decision.kind == "ignore":
            return Response(status=204)
        if decision.kind == "ping":
            log.info("delivery %s: ping (%s)", delivery, decision.reason)
            return _answer(200, status="pong")
        if decision.kind == "record":
            self._record_installation(payload, decision.reason)
            return _answer(200, status="recorded", event=decision.reason)
        if decision.comment is not None:  # which commands a report published later postdates
            state.note_comment(*decision.comment)
        if decision.kind == "skip":
            for head in decision.heads:
                state.record_head(head.job, head.before, updated=head.updated, first=head.first)
            log.info("delivery %s: %s skipped: %s", delivery, event, decision.reason)
            return _answer(200, status="skipped", reason=decision.reason)
        if not state.claim_delivery(delivery):
            status = state.delivery_status(delivery)
            log.info("delivery %s: duplicate (%s)", delivery, status)
            return _answer(200, status="duplicate", delivery_status=status)
        try:
            # a command names no head: the worker reads it from GitHub and records it then
            jobs = [head.job for head in decision.heads
                    if head.job.is_command
                    or state.record_head(head.job, head.before, updated=head.updated, first=head.first)]
            for job in jobs:
                self.queue.enqueue(job)
            if jobs:
                state.confirm_delivery(delivery)  # until then a redelivery may claim it again
        except Exception:
            # so that a redelivery runs it; if the storage is down this fails too, and the claim,
            # never confirmed, lets a redelivery run it anyway (JobState.claim_delivery)
            state.mark_delivery(delivery, "failed")
            raise
        if not jobs:
            state.mark_delivery(delivery, "done")
            return _answer(200, status="superseded", reason="a newer head of the pull request was seen")
        log.info("delivery %s: %s %s queued %s", delivery, event, decision.reason,
                 ", ".join(job.job_id for job in jobs))
        return _answer(202, status="queued", jobs=[job.job_id for job in jobs])

    def _record_installation(self, payload: dict[str, Any], what: str) -> None:
        installation = payload.get("installation") if isinstance(payload.get("installation"), dict) else {}
        account = installation.get("account") if isinstance(installation.get("account"), dict) else {}
        added = payload.get("repositories_added") or payload.get("repositories") or []
        removed = payload.get("repositories_removed") or []
        if isinstance(installation.get("id"), int):
            self.state.record_installation(installation["id"], {
                "event": what, "account": account.get("login"),
                "repository_selection": payload.get("repository_selection")
                or installation.get("repository_selection")})
        log.info("installation %s of %s: %s (%d repositories added, %d removed)", installation.get("id"),
                 account.get("login"), what, len(added) if isinstance(added, list) else 0,
                 len(removed) if isinstance(removed, list) else 0)

    def health(self) -> tuple[Response, int]:
        try:
            pending = self.queue.pending()
        except Exception as exc:
            log.error("health check: the queue is unreachable: %s", type(exc).__name__)
            return _answer(503, status="unavailable", queue=self.queue.kind)
        return _answer(200, status="ok", queue=self.queue.kind, pending=pending,
                       registered=self.secret() is not None)
