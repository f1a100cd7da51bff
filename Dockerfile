# kbroker in a container: a single-node broker listening on 9092 with its data in the /data volume.
#   docker build -t kbroker . && docker run -p 9092:9092 -v kbroker-data:/data kbroker
# Set KBROKER_ADVERTISED to the address clients use to reach the container (default localhost:9092).
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY kbroker ./kbroker
RUN pip install --no-cache-dir .

ENV KBROKER_ADVERTISED=PLAINTEXT://localhost:9092
VOLUME /data
EXPOSE 9092
STOPSIGNAL SIGTERM
CMD ["sh", "-c", "exec kbroker serve --data-dir /data --listeners PLAINTEXT://0.0.0.0:9092 --advertised-listeners \"$KBROKER_ADVERTISED\""]
