# syntax=docker/dockerfile:1
# One image for the API, the workers and the migrations; the command picks the role:
#   API (default)  uvicorn --factory strata_api.main:create ...
#   worker         celery -A strata_workers.main worker -Q <queue> -n <queue>@%h
#   migrations     strata migrate
# Build: docker build -t strata:0.1.0 .
# The one base image of both stages; pin it by digest (python:3.11-slim-bookworm@sha256:...)
# where builds must be reproducible.
FROM python:3.11-slim-bookworm AS base

# --- build: a virtualenv with the locked dependencies and Strata itself -------
FROM base AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /build
RUN python -m venv /opt/strata
COPY pyproject.toml constraints.txt README.md ./
COPY src ./src
COPY services ./services
# Every dependency has a binary wheel for CPython 3.11 on manylinux, so no
# compiler is needed; constraints.txt is the lock file. The pip cache lives in
# a BuildKit cache mount, never in a layer. The image's knowledge worker talks to
# an OpenAI-compatible endpoint (STRATA_LLM_PROVIDER=openai); the in-process
# local model (`local-llm` extra) compiles llama.cpp and is left to local setups.
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/strata/bin/pip install --prefer-binary -c constraints.txt ".[api,workers,knowledge]" \
 && /opt/strata/bin/pip uninstall -y pip

# --- runtime: the virtualenv, git, tini and nothing to build with -------------
FROM base AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="strata" \
      org.opencontainers.image.description="Bitemporal knowledge-graph memory for AI coding agents: API, workers, migrations" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"

# git: the code worker mirrors and diffs repositories. tini: PID 1 that forwards
# SIGTERM to uvicorn/celery (warm shutdown) and reaps the children git leaves.
# The installer tooling of the base image (pip, setuptools, wheel) goes too.
# DL3008 (pin apt versions) is ignored: Debian's security updates replace
# package versions, so a pin would break the build at the next update; the base
# image (by digest, where pinned) fixes the distribution release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git tini \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/* \
 && python -m pip uninstall -y pip setuptools wheel \
 && groupadd --system --gid 10001 strata \
 && useradd --system --uid 10001 --gid strata --home-dir /home/strata --create-home \
      --shell /usr/sbin/nologin strata \
 && install -d -o strata -g strata -m 0750 /var/lib/strata /var/lib/strata/mirrors

COPY --from=build /opt/strata /opt/strata
COPY ontology /usr/local/share/strata/ontology
COPY migrations /usr/local/share/strata/migrations

# Settings the image owns (paths inside it); everything else comes from the
# deployment (docker-compose.yml, the Helm chart). Production unless told otherwise.
ENV PATH=/opt/strata/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    STRATA_ENVIRONMENT=production \
    STRATA_ONTOLOGY_DIR=/usr/local/share/strata/ontology \
    STRATA_MIGRATIONS_DIR=/usr/local/share/strata/migrations \
    STRATA_MIRRORS_DIR=/var/lib/strata/mirrors

USER 10001:10001
WORKDIR /home/strata
EXPOSE 8000

# One check for every role: a worker (STRATA_WORKER_READY_FILE set) is healthy
# while its ready file exists; the API while /healthz answers.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request as u; f = os.environ.get('STRATA_WORKER_READY_FILE'); sys.exit(0 if os.path.exists(f) else 1) if f else u.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["uvicorn", "--factory", "strata_api.main:create", "--host", "0.0.0.0", "--port", "8000", "--no-access-log"]
