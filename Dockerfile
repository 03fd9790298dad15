# difforacle's image: the GitHub App's web server (the default command) and worker
# (`difforacle app worker`), and the sandbox the worker runs the engine in.
#
#   docker build -t difforacle:latest .
#
# BASE may be any Debian-like image with python3 >= 3.11, python3-venv and git; where no
# registry is reachable, `difforacle app build-image` builds one with debootstrap and passes
# --build-arg BASE=difforacle-base:bookworm (and a local wheelhouse through the PIP_* args).
ARG BASE=python:3.11-slim

FROM ${BASE} AS builder
# marks the stage's leftover image, for `docker image prune --filter label=difforacle.stage=builder`
LABEL difforacle.stage=builder
# pip's index for this build only (a mirror, or a wheelhouse in the context); unset by default
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_FIND_LINKS
ARG PIP_NO_INDEX
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# with the `app` extra (Flask, waitress, huey, redis, docker): the image is the App's server and
# worker; pip compiles the bytecode: at run time the root filesystem is read-only
RUN python3 -m venv /opt/difforacle \
    && /opt/difforacle/bin/pip install --no-cache-dir '.[app]' \
    && /opt/difforacle/bin/python -c "import difforacle.generator.worker, difforacle.bot.app.webhook" \
    && /opt/difforacle/bin/python -c "import difforacle.bot.app.sandbox_docker, redis, waitress"

FROM ${BASE}
# git: the engine checks base and head out as worktrees, the worker fetches them
RUN if ! command -v git >/dev/null; then \
        apt-get update \
        && apt-get install -y --no-install-recommends git ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --uid 10001 --user-group --no-log-init --create-home --shell /usr/sbin/nologin difforacle \
    && install -d -o 10001 -g 10001 /var/lib/difforacle
COPY --from=builder /opt/difforacle /opt/difforacle
ENV PATH=/opt/difforacle/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    DIFFORACLE_DATA_DIR=/var/lib/difforacle
USER 10001:10001
WORKDIR /home/difforacle
EXPOSE 8080
# the web server's health; a worker container overrides or disables it (see compose.yaml)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
CMD ["difforacle", "app", "serve", "--host", "0.0.0.0", "--port", "8080"]
