# Multi-stage build of the production binary (cmd/tokenscope, static); the runtime image holds
# nothing else. The development stack (cmd/tokenscope-dev, with the embedded Temporal server and
# UI) is never built here; cmd/tokenscope/deps_test.go checks the production binary links neither.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tokenscope ./cmd/tokenscope

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tokenscope /usr/local/bin/tokenscope
USER nonroot:nonroot
EXPOSE 8080 8081 8090
ENTRYPOINT ["/usr/local/bin/tokenscope"]
CMD ["serve"]
