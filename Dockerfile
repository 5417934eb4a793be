# The cosci worker, starter and desk, for docker-compose.yml (the worker by default).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/cosci-worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter && CGO_ENABLED=0 go build -o /out/desk ./desk
# The analysis sandbox's child links DuckDB (cgo, glibc and libstdc++): the worker finds it
# beside its own executable.
RUN CGO_ENABLED=1 go build -o /out/cosci-sandbox ./sandbox

# Debian, not a static image: the worker runs children under prlimit (util-linux, in the
# base), pdftotext (poppler-utils) for full texts and the sandbox's DuckDB, which needs glibc.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends poppler-utils ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --uid 10001 cosci
COPY --from=build /out/ /usr/local/bin/
USER cosci
ENTRYPOINT ["/usr/local/bin/cosci-worker"]
