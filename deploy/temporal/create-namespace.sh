#!/bin/sh
# Registers the namespace tokenscope uses once the server answers (auto-setup did this itself).
set -eu
ns="${TEMPORAL_NAMESPACE:-default}"
for i in $(seq 1 30); do
  temporal operator cluster health --address "$TEMPORAL_ADDRESS" && break
  sleep 2
done
temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$ns" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$ns" --retention 72h
