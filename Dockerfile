# Multi-stage build of the one static binary; the runtime image holds nothing else.
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
