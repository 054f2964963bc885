# paperbot: `docker build -t paperbot .`, then `docker run --env-file .env -v paperbot-data:/data paperbot`
# (docs/operations.md). Any verb works: `docker run ... paperbot console`.
ARG PYTHON_IMAGE=python:3.11-slim

# Build the virtualenv in a stage of its own, so that pip's caches and the source stay out of the image.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY data/papers.yaml ./data/papers.yaml
# The runtime only: not the test extras.
RUN python3 -m venv /opt/paperbot && /opt/paperbot/bin/pip install .

FROM ${PYTHON_IMAGE}
# A font with Chinese and Japanese for the history's picture in chat (bot/web/chart_png.py): 5 MB.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-wqy-microhei \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/paperbot /opt/paperbot
# A user of its own, not root; it owns the database's volume.
RUN groupadd --system --gid 10001 paperbot \
 && useradd --system --uid 10001 --gid paperbot --home-dir /data --shell /usr/sbin/nologin paperbot \
 && install -d -o paperbot -g paperbot -m 0750 /data
ENV PATH=/opt/paperbot/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PAPERBOT_DB=/data/paperbot.db \
    PORT=3000
# The database, its -wal and its owners folder: one volume, kept across containers.
VOLUME ["/data"]
WORKDIR /data
USER paperbot
# HTTP mode only; Socket Mode needs no port.
EXPOSE 3000
ENTRYPOINT ["paperbot"]
CMD ["run"]
