#!/bin/sh
# The role streaming standbys connect as (the replica profile's postgres-replica, README "Read
# replicas and failover"), and the pg_hba.conf line that lets it in from the compose network.
# The postgres image runs this once, when it initialises an empty data directory; on an existing
# volume run the same statement and append the same line by hand, then reload.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v pw="$REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'pw';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
