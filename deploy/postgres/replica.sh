#!/bin/sh
# A streaming standby of the postgres service (the replica profile): on an empty data directory
# a base backup of the primary that also writes the standby's recovery settings (-R:
# standby.signal and primary_conninfo), then the server, read-only, replaying the primary's WAL
# as it streams. The API sends its market reads here (DATABASE_REPLICA_URLS) while it is current.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	until pg_isready -h postgres -p 5432 -q; do sleep 1; done
	PGPASSWORD="$REPLICATION_PASSWORD" pg_basebackup -h postgres -p 5432 -U replicator \
		-D "$PGDATA" -R -X stream -c fast
	chmod 700 "$PGDATA"
fi
# hot_standby_feedback: the primary keeps rows a long read here still needs, instead of the
# standby cancelling the read (the API retries a cancelled read on the primary either way).
exec postgres -c hot_standby=on -c hot_standby_feedback=on -c max_standby_streaming_delay=5s
