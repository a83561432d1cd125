# ONNX Studio's image. The build stage makes the wheel as CI does (tests/browser/test_wheel.py):
# scripts/build_frontend.py builds the front end (esbuild bundle, npm libraries) into app/static,
# then `python -m build` makes the sdist and the wheel from it. The runtime stage pip-installs that
# wheel into a slim Python: no node, no npm, nothing fetched when a container starts.
#
#   docker build -t onnx-studio .
#   docker run -p 127.0.0.1:8080:8080 -v onnx-studio-data:/data -e ONNX_STUDIO_AUTH_TOKEN=... onnx-studio

FROM node:20-bookworm-slim AS build
# bookworm's python3 is 3.11, what the package needs
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /venv && /venv/bin/pip install --no-cache-dir "build>=1.2,<2"
WORKDIR /src
# the npm libraries first (a layer of their own while package-lock.json stays the same); esbuild
# and the libraries the page loads are dependencies, the lint tools devDependencies
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
RUN python3 scripts/build_frontend.py \
 && /venv/bin/python -m build --outdir /dist . \
 && ls /dist/onnx_studio-*.whl

FROM python:3.11-slim-bookworm AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /dist/*.whl /tmp/wheels/
# [team]: PostgreSQL's and S3's clients, which the compose file's team profile runs this image with
# the image's own setuptools (65.x) has known CVEs and nothing at run time needs it
RUN pip install --no-cache-dir --upgrade pip \
 && pip uninstall --yes setuptools wheel \
 && pip install --no-cache-dir "$(echo /tmp/wheels/onnx_studio-*.whl)[team]" \
 && rm -rf /tmp/wheels
# onnxruntime's StringNormalizer (a scikit-learn text pipeline's first node) builds the
# en_US.UTF-8 locale unless the model names another: slim images have none
RUN apt-get update \
 && apt-get install -y --no-install-recommends locales \
 && localedef -i en_US -f UTF-8 en_US.UTF-8 \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 studio \
 && useradd --system --uid 10001 --gid studio --home-dir /data --no-create-home studio \
 && mkdir /data \
 && chown studio:studio /data
ENV ONNX_STUDIO_DATA_DIR=/data \
    ONNX_STUDIO_HOST=0.0.0.0
USER 10001:10001
VOLUME /data
EXPOSE 8080
# no curl in slim images: python's urllib asks /healthz (open to any caller, no token needed)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('ONNX_STUDIO_PORT', '8080'), timeout=4)"]
CMD ["onnx-studio", "serve"]
