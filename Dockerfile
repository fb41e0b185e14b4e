# The image of the selfcorrect GitHub Action (action.yml: `runs: using: docker, image:
# Dockerfile`). GitHub's runner builds it from the action repository's checkout
# (`docker build -f Dockerfile .`) and runs it as root with `--workdir /github/workspace`,
# the /github/* mounts, /var/run/docker.sock and the INPUT_* / GITHUB_* variables.
#
# Two stages: the builder makes a virtual environment and pip-installs the package into it
# (a real, non-editable install, so the sandbox/ and templates/ data live inside the venv);
# the final stage is Debian's python3 plus that venv, and nothing else.
#
# Behind a TLS-intercepting proxy: put its CA (PEM, *.crt) into .ci/ca-certificates/ before
# building (see the README there). Only pip in the builder trusts it; it never reaches the
# final image. GitHub-hosted runners need no extra CA.
#
# Classic-builder syntax only (no RUN --mount, no heredocs): docker 20.10 without BuildKit
# builds it as well as BuildKit does. The base is pulled on GitHub and made locally by
# debootstrap where no registry answers (see selfcorrect_action/sandbox/base_image.py).

# ---- builder ---------------------------------------------------------------------------
FROM debian:bookworm-slim AS builder

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      python3 \
      python3-venv \
 && rm -rf /var/lib/apt/lists/*

# After the apt step: installing ca-certificates regenerates /etc/ssl/certs. The build-time
# bundle is Debian's plus every *.crt of .ci/ca-certificates/, in a file of its own that only
# the pip commands below are pointed at (PIP_CERT).
COPY .ci/ca-certificates/ /tmp/extra-ca/
RUN set -eu; \
    cp /etc/ssl/certs/ca-certificates.crt /tmp/build-ca.pem; \
    for crt in /tmp/extra-ca/*.crt; do \
      [ -f "$crt" ] || continue; \
      if ! grep -q -- '-----BEGIN CERTIFICATE-----' "$crt"; then \
        echo "error: $crt holds no PEM certificate" >&2; exit 1; \
      fi; \
      echo "trusting $crt for this build's downloads"; \
      { cat "$crt"; echo; } >> /tmp/build-ca.pem; \
    done

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PIP_DEFAULT_TIMEOUT=120

RUN python3 -m venv /opt/selfcorrect/venv

# The dependencies first, read from pyproject.toml alone: a change to the code leaves this
# (slow: litellm and friends) layer cached.
COPY pyproject.toml /src/pyproject.toml
RUN /opt/selfcorrect/venv/bin/python -c 'import tomllib; print("\n".join(tomllib.load(open("/src/pyproject.toml", "rb"))["project"]["dependencies"]))' \
      > /tmp/requirements.txt \
 && PIP_CERT=/tmp/build-ca.pem \
      /opt/selfcorrect/venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt

COPY README.md /src/README.md
COPY sandbox /src/sandbox
COPY templates /src/templates
COPY selfcorrect_action /src/selfcorrect_action
# The package itself (pip fetches hatchling into an isolated build env). Then what the
# action never uses leaves the venv: pip and setuptools (nothing installs packages at run
# time), the activate scripts, and litellm's proxy admin UI (~22 MB of static web assets,
# served only by `litellm --proxy`). The bytecode pip compiled stays: without it every
# start would spend ~6 s more compiling litellm (the image runs with
# PYTHONDONTWRITEBYTECODE). The checks make a broken install fail here rather than in a
# workflow: the console script runs, and the data resolves inside the venv (the source-tree
# fallback of selfcorrect_action/resources.py would mean an editable install).
RUN PIP_CERT=/tmp/build-ca.pem /opt/selfcorrect/venv/bin/pip install --no-cache-dir /src \
 && /opt/selfcorrect/venv/bin/pip uninstall -y -q pip setuptools \
 && rm -rf /opt/selfcorrect/venv/bin/activate* /opt/selfcorrect/venv/bin/Activate.ps1 \
      /opt/selfcorrect/venv/lib/python3*/site-packages/litellm/proxy/_experimental/out \
 && /opt/selfcorrect/venv/bin/selfcorrect --version \
 && cd / && /opt/selfcorrect/venv/bin/python -c 'from selfcorrect_action.resources import sandbox_context, templates_dir; import sys; paths = (sandbox_context(), templates_dir()); print(*paths); sys.exit(any(not str(p).startswith("/opt/selfcorrect/venv/") for p in paths))'

# ---- final -----------------------------------------------------------------------------
FROM debian:bookworm-slim

LABEL org.opencontainers.image.title="selfcorrect-action" \
      org.opencontainers.image.description="GitHub Action: turns a plain-language task into a Python script shown to work in a locked-down sandbox, and opens a PR with the audit trail" \
      org.opencontainers.image.source="https://github.com/OWNER/selfcorrect" \
      org.opencontainers.image.licenses="MIT" \
      org.selfcorrect.role="action"

# python3 and the CA bundle for the action's own HTTPS calls; caches and apt lists go in the
# same layer. The base keeps docs, man pages and translations out of every layer (the
# official slim image's dpkg excludes, which base_image.py writes into a debootstrap-made
# base too).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      python3 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old \
      /var/log/apt/* /var/log/dpkg.log /var/log/alternatives.log /tmp/*

COPY --from=builder /opt/selfcorrect/venv /opt/selfcorrect/venv

# Root, on purpose (no USER): GitHub requires Docker actions to run as the default user, and
# the workspace and file-command files it mounts belong to root.
ENV PATH=/opt/selfcorrect/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    VIRTUAL_ENV=/opt/selfcorrect/venv \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

ENTRYPOINT ["/opt/selfcorrect/venv/bin/selfcorrect", "action"]
