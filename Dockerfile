# leadline: one static binary on a minimal image, run as a non-root user.
#
#   docker build -t leadline .
#   docker run -p 8080:8080 -v leadline-data:/data leadline
#
# SQLite lives in /data (a volume); for Postgres pass LEADLINE_DB and
# LEADLINE_SECRET_KEY. See docs/DEPLOY.md.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go (the SQLite driver is too): a static binary that needs no libc.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/leadline ./cmd/leadline \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/leadline /usr/local/bin/leadline
# The data folder belongs to the image's non-root user (65532).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
ENV LEADLINE_DB=/data/leadline.db \
    LEADLINE_ADDR=0.0.0.0:8080
EXPOSE 8080 9090
VOLUME ["/data"]
# The image has no shell or curl: the binary checks its own /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/leadline", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/leadline"]
CMD ["serve", "--metrics-addr", "0.0.0.0:9090"]
