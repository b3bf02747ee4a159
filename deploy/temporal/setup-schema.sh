#!/bin/sh
# Brings Temporal's two databases to the schema of this admin-tools release (the server's own
# version): a fresh database gets the base schema, an existing one the missing versioned steps.
# Run as the temporal user, which owns both databases (deploy/postgres/10-temporal.sh).
set -eu
# The password comes from SQL_PASSWORD, which temporal-sql-tool reads itself.
tool() { temporal-sql-tool --plugin postgres12 --ep postgres -p 5432 -u temporal "$@"; }
schema=/etc/temporal/schema/postgresql/v12
tool --db temporal setup-schema -v 0.0
tool --db temporal update-schema -d "$schema/temporal/versioned"
tool --db temporal_visibility setup-schema -v 0.0
tool --db temporal_visibility update-schema -d "$schema/visibility/versioned"
