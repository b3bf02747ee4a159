-- name: DatabaseExists :one
-- Run on the server's "postgres" database. The migration runner's statements on
-- schema_migrations stay in Go: that table is its own bookkeeping, created before any
-- migration, and not part of the migrations/ schema sqlc reads.
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1);
