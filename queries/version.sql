-- name: NotifyMarket :exec
-- Announces the derived market state a transaction changed (adapters/postgres/version.go):
-- Postgres delivers the notifications to every listening session when, and only if, the
-- transaction commits, in commit order, and sends identical ones of one transaction once.
SELECT pg_notify('tokenscope_market', k) FROM unnest(sqlc.arg(keys)::text[]) AS k;
