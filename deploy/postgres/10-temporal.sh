#!/bin/sh
# Temporal's own database user and its two databases, so the Temporal server never connects as the
# superuser. The postgres image runs this once, when it initialises an empty data directory
# (docker-compose.yml mounts it into /docker-entrypoint-initdb.d); on an existing volume create
# them by hand with the same statements.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v pw="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN PASSWORD :'pw';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
SQL
