#!/usr/bin/env bash
# CI smoke test of the benchmark harness: runs `make bench` at the smoke scale (a few thousand
# trades, one second per series) against the local Postgres. It checks that the harness works
# end to end and that no endpoint that exists answers an error; it sets no timing threshold.
# Exits non-zero on any error. Needs Postgres on 127.0.0.1:5432 (user postgres, trust auth).
set -euo pipefail
cd "$(dirname "$0")/.."
exec make bench BENCH_SCALE=smoke
