# agentgate: the one binary, built with cgo (the SQL and code engines use
# cgo parsers) and run as an unprivileged user on Debian slim.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/agentgate ./cmd/agentgate

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates z3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data agentgate \
 && mkdir -p /data && chown agentgate /data
COPY --from=build /out/agentgate /usr/local/bin/agentgate
USER agentgate
VOLUME /data
EXPOSE 8080
ENV AGENTGATE_DATA=/data AGENTGATE_HTTP=0.0.0.0:8080
ENTRYPOINT ["/usr/local/bin/agentgate"]
CMD ["serve"]
