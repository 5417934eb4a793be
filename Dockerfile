# The cosci worker, starter and desk, for docker-compose.yml (the worker by default).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/cosci-worker ./worker && CGO_ENABLED=0 go build -o /out/starter ./starter && CGO_ENABLED=0 go build -o /out/desk ./desk

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/ /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/cosci-worker"]
