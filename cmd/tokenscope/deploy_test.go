package main

// No Docker engine runs where the tests run, so the deployment files are tested by parsing
// them: docker-compose.yml with the Compose specification's own loader, the Dockerfile as text.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadCompose loads the file with the given profiles active (none: what `docker compose up` runs).
func loadCompose(t *testing.T, profiles ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join("..", "..", "docker-compose.yml")},
		cli.WithName("tokenscope"), cli.WithWorkingDirectory(filepath.Join("..", "..")), cli.WithProfiles(profiles))
	require.NoError(t, err)
	p, err := opts.LoadProject(context.Background())
	require.NoError(t, err, "docker-compose.yml must load under the Compose specification")
	return p
}

func TestComposeServices(t *testing.T) {
	p := loadCompose(t)
	want := []string{"api", "migrate", "postgres", "redis", "temporal", "temporal-namespace", "temporal-schema", "temporal-ui", "worker"}
	assert.ElementsMatch(t, want, p.ServiceNames())

	pg := p.Services["postgres"]
	assert.Regexp(t, `^postgres:\d+$`, pg.Image, "postgres pinned to a major version")
	require.NotNil(t, pg.HealthCheck)
	assert.Contains(t, strings.Join(pg.HealthCheck.Test, " "), "pg_isready")

	// Temporal: the production server image (not auto-setup), its schema set up by a one-shot
	// admin-tools step before it starts, the namespace registered by another once it answers.
	mod := goModVersions(t)
	tmp := p.Services["temporal"]
	assert.Equal(t, "temporalio/server:"+mod["go.temporal.io/server"], tmp.Image, "the server version make run embeds")
	assert.Equal(t, "postgres12", *tmp.Environment["DB"], "Temporal is backed by the same Postgres")
	assert.Equal(t, "postgres", *tmp.Environment["POSTGRES_SEEDS"])
	assert.Equal(t, "service_completed_successfully", tmp.DependsOn["temporal-schema"].Condition, "the schema is set up first")
	require.NotNil(t, tmp.HealthCheck)
	for _, step := range []string{"temporal-schema", "temporal-namespace"} {
		s := p.Services[step]
		assert.Equal(t, "temporalio/admin-tools:"+mod["go.temporal.io/server"], s.Image, step)
		assert.Equal(t, "no", s.Restart, "%s is a one-shot step", step)
		require.Len(t, s.Volumes, 1, step)
		script, err := os.ReadFile(composePath(s.Volumes[0].Source))
		require.NoError(t, err, "%s runs a script of the repository", step)
		assert.Equal(t, []string{"/bin/sh", s.Volumes[0].Target}, []string(s.Entrypoint), step)
		if step == "temporal-schema" {
			assert.Equal(t, "service_healthy", s.DependsOn["postgres"].Condition)
			for _, db := range []string{"temporal", "temporal_visibility"} {
				assert.Regexp(t, `(?m)^tool --db `+db+` setup-schema -v 0\.0$`, string(script))
				assert.Regexp(t, `(?m)^tool --db `+db+` update-schema -d "\$schema/`+strings.TrimPrefix(db, "temporal_")+`/versioned"$`, string(script))
			}
			assert.Contains(t, string(script), "-u temporal ", "as Temporal's own user")
		} else {
			assert.Equal(t, "service_healthy", s.DependsOn["temporal"].Condition)
			assert.Contains(t, string(script), "temporal operator namespace create")
			assert.Equal(t, "default", *s.Environment["TEMPORAL_NAMESPACE"], "the namespace the services use")
		}
	}

	// Temporal connects as its own user, which an init script of the Postgres container creates
	// with the password both sides read; never as the superuser the Postgres image creates.
	assert.Equal(t, "temporal", *tmp.Environment["POSTGRES_USER"])
	assert.NotEqual(t, *pg.Environment["POSTGRES_USER"], *tmp.Environment["POSTGRES_USER"], "not the superuser")
	assert.Equal(t, *pg.Environment["TEMPORAL_DB_PASSWORD"], *tmp.Environment["POSTGRES_PWD"])
	assert.Equal(t, *pg.Environment["TEMPORAL_DB_PASSWORD"], *p.Services["temporal-schema"].Environment["SQL_PASSWORD"])
	var initScript string
	for _, v := range pg.Volumes {
		if strings.HasPrefix(v.Target, "/docker-entrypoint-initdb.d/") {
			raw, err := os.ReadFile(composePath(v.Source))
			require.NoError(t, err)
			initScript += string(raw)
		}
	}
	assert.Contains(t, initScript, "CREATE ROLE temporal LOGIN PASSWORD :'pw';")
	assert.NotContains(t, initScript, "SUPERUSER")
	for _, db := range []string{"temporal", "temporal_visibility"} {
		assert.Contains(t, initScript, "CREATE DATABASE "+db+" OWNER temporal;")
	}

	// The frontend and the UI have no authentication: published on the loopback interface only.
	require.Len(t, tmp.Ports, 1)
	assert.Equal(t, "7233", tmp.Ports[0].Published)
	assert.Equal(t, "127.0.0.1", tmp.Ports[0].HostIP, "7233 is not published on every interface")

	ui := p.Services["temporal-ui"]
	assert.Equal(t, "temporalio/ui:"+mod["github.com/temporalio/ui-server/v2"], ui.Image, "the UI version make run embeds")
	assert.Equal(t, "temporal:7233", *ui.Environment["TEMPORAL_ADDRESS"])
	assert.Equal(t, "8233", ui.Ports[0].Published)
	assert.Equal(t, "127.0.0.1", ui.Ports[0].HostIP)

	// Every tokenscope service runs a registered subcommand of this very binary, built from the
	// Dockerfile, with the same database and Temporal settings.
	for name, cmd := range map[string]string{"migrate": "migrate", "api": "serve", "worker": "worker"} {
		s := p.Services[name]
		require.NotNil(t, s.Build, "%s is built from the repository", name)
		assert.Equal(t, "Dockerfile", filepath.Base(s.Build.Dockerfile))
		require.Equal(t, types.ShellCommand{cmd}, s.Command, name)
		_, ok := commands[cmd]
		assert.True(t, ok, "%s runs `tokenscope %s`, which must be a registered subcommand", name, cmd)
		assert.Equal(t, "temporal:7233", *s.Environment["TEMPORAL_ADDRESS"], name)
		assert.Contains(t, *s.Environment["DATABASE_URL"], "@postgres:5432/", name)
	}
	assert.Equal(t, "service_healthy", p.Services["migrate"].DependsOn["postgres"].Condition, "migrate waits for Postgres")
	assert.Equal(t, "no", p.Services["migrate"].Restart)

	for _, name := range []string{"api", "worker"} {
		s := p.Services[name]
		assert.Equal(t, "service_completed_successfully", s.DependsOn["migrate"].Condition, "%s waits for migrations", name)
		assert.Equal(t, "service_healthy", s.DependsOn["temporal"].Condition, "%s waits for Temporal", name)
		assert.Equal(t, "service_completed_successfully", s.DependsOn["temporal-namespace"].Condition, "%s waits for its namespace", name)
		assert.Equal(t, "service_healthy", s.DependsOn["redis"].Condition, "%s waits for Redis (REDIS_URL)", name)
		require.NotNil(t, s.HealthCheck, name)
		test := s.HealthCheck.Test
		require.GreaterOrEqual(t, len(test), 3, name)
		assert.Equal(t, "healthcheck", test[2], "%s probes with `tokenscope healthcheck`", name)
		_, ok := commands["healthcheck"]
		assert.True(t, ok)
	}
	api := p.Services["api"]
	published := map[string]uint32{}
	for _, port := range api.Ports {
		published[port.Published] = port.Target
	}
	assert.Contains(t, published, "8080", "main API")
	assert.Contains(t, published, "8081", "dex API (multi-token detail)")
	// /metrics has no authentication: reachable from the compose network, never published.
	assert.Equal(t, ":9091", *api.Environment["ADMIN_HTTP_ADDR"])
	assert.NotContains(t, published, "9091", "the admin address is not published")
	for _, port := range api.Ports {
		assert.NotEqual(t, uint32(9091), port.Target, "the admin address is not published")
	}
	assert.Contains(t, strings.Join(api.HealthCheck.Test, " "), ":8080/readyz")
	assert.Contains(t, strings.Join(p.Services["worker"].HealthCheck.Test, " "), ":8090/readyz")
	assert.Equal(t, ":8090", *p.Services["worker"].Environment["WORKER_HEALTH_ADDR"])
}

// TestComposeReplicaProfile: the replica profile adds a streaming standby of the primary, made
// of the same official image by a base backup with recovery settings, and the API's reads point
// at it; the primary lets the standbys' role replicate.
func TestComposeReplicaProfile(t *testing.T) {
	assert.NotContains(t, loadCompose(t).ServiceNames(), "postgres-replica", "only in the replica profile")
	p := loadCompose(t, "replica")
	pg, rep := p.Services["postgres"], p.Services["postgres-replica"]
	assert.Equal(t, pg.Image, rep.Image, "the standby runs the primary's image (same major version)")
	assert.Equal(t, "service_healthy", rep.DependsOn["postgres"].Condition)
	require.NotNil(t, rep.HealthCheck)
	require.Len(t, rep.Entrypoint, 2)
	var script string
	for _, v := range rep.Volumes {
		if v.Target == rep.Entrypoint[1] {
			raw, err := os.ReadFile(composePath(v.Source))
			require.NoError(t, err)
			script = string(raw)
		}
	}
	require.NotEmpty(t, script, "the entrypoint is a script of the repository")
	assert.Regexp(t, `pg_basebackup -h postgres -p 5432 -U replicator\s+\\?\s*-D "\$PGDATA" -R -X stream`, script,
		"a base backup of the primary with the standby's recovery settings")
	assert.Contains(t, script, "hot_standby=on", "it answers reads while replaying")
	assert.Equal(t, *pg.Environment["REPLICATION_PASSWORD"], *rep.Environment["REPLICATION_PASSWORD"])

	var initScripts string
	for _, v := range pg.Volumes {
		if strings.HasPrefix(v.Target, "/docker-entrypoint-initdb.d/") {
			raw, err := os.ReadFile(composePath(v.Source))
			require.NoError(t, err)
			initScripts += string(raw)
		}
	}
	assert.Contains(t, initScripts, "CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'pw';")
	assert.Contains(t, initScripts, "host replication replicator all scram-sha-256")

	urls := p.Services["api"].Environment["DATABASE_REPLICA_URLS"]
	require.NotNil(t, urls)
	assert.Contains(t, *urls, "@postgres-replica:5432/tokenscope", "the API's reads go to the standby")
	assert.NotContains(t, p.Services["worker"].Environment, "DATABASE_REPLICA_URLS", "a worker serves no reads")
	assert.Contains(t, *p.Services["api"].Environment["DATABASE_URL"], "@postgres:5432/", "the writes stay on the primary")
}

// TestComposeMemory: every tokenscope container has a memory limit and a GOMEMLIMIT below it
// (README, "Two binaries": set GOMEMLIMIT below a container's memory limit).
func TestComposeMemory(t *testing.T) {
	p := loadCompose(t, "demo")
	for _, name := range []string{"migrate", "api", "worker", "simulator"} {
		s := p.Services[name]
		require.NotNil(t, s.Deploy, name)
		require.NotNil(t, s.Deploy.Resources.Limits, name)
		limit := int64(s.Deploy.Resources.Limits.MemoryBytes)
		require.Positive(t, limit, "%s has a memory limit", name)
		raw := s.Environment["GOMEMLIMIT"]
		require.NotNil(t, raw, "%s sets GOMEMLIMIT", name)
		soft := goMemLimit(t, *raw)
		assert.Less(t, soft, limit, "%s: GOMEMLIMIT below the container's limit", name)
		assert.GreaterOrEqual(t, soft, limit/2, "%s: but not far below it", name)
	}
}

// goMemLimit reads a GOMEMLIMIT value (a byte count with an optional B, KiB, MiB, GiB or TiB suffix).
func goMemLimit(t *testing.T, s string) int64 {
	t.Helper()
	m := regexp.MustCompile(`^(\d+)(B|KiB|MiB|GiB|TiB)?$`).FindStringSubmatch(s)
	require.NotNil(t, m, "GOMEMLIMIT %q", s)
	n, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	shift := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[m[2]]
	return n << shift
}

// composePath is a file docker-compose.yml names (compose-go makes bind sources absolute).
func composePath(source string) string {
	if filepath.IsAbs(source) {
		return source
	}
	return filepath.Join("..", "..", source)
}

// goModVersions reads the required module versions of go.mod (without the leading v).
func goModVersions(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:require\s+)?(\S+)\s+v(\S+)`).FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = m[2]
	}
	require.NotEmpty(t, out["go.temporal.io/server"])
	require.NotEmpty(t, out["github.com/temporalio/ui-server/v2"])
	return out
}

// TestComposeRedis: the API limits per key in Redis, shared by its replicas.
func TestComposeRedis(t *testing.T) {
	p := loadCompose(t)
	r := p.Services["redis"]
	assert.Regexp(t, `^redis:\d+$`, r.Image, "redis pinned to a major version")
	require.NotNil(t, r.HealthCheck)
	assert.Contains(t, strings.Join(r.HealthCheck.Test, " "), "redis-cli ping")
	api := p.Services["api"]
	require.NotNil(t, api.Environment["REDIS_URL"])
	assert.Contains(t, *api.Environment["REDIS_URL"], "redis://redis:6379")
	assert.Equal(t, "service_healthy", api.DependsOn["redis"].Condition, "the API is unready without Redis anyway")
}

// TestComposeDemoProfile: `docker compose --profile demo up` adds the simulator, which runs
// `tokenscope simulate` live into the database the API serves once the API and a worker are
// healthy; a plain `docker compose up` leaves it out.
func TestComposeDemoProfile(t *testing.T) {
	plain := loadCompose(t)
	assert.NotContains(t, plain.ServiceNames(), "simulator")
	assert.Contains(t, plain.DisabledServices, "simulator", "declared, but only under its profile")

	p := loadCompose(t, "demo")
	require.Contains(t, p.ServiceNames(), "simulator")
	sim := p.Services["simulator"]
	assert.Equal(t, []string{"demo"}, sim.Profiles)
	require.NotNil(t, sim.Build, "built from the repository like the other tokenscope services")
	assert.Equal(t, "Dockerfile", filepath.Base(sim.Build.Dockerfile))
	require.GreaterOrEqual(t, len(sim.Command), 1)
	assert.Equal(t, "simulate", sim.Command[0])
	_, ok := commands["simulate"]
	assert.True(t, ok, "`tokenscope simulate` is a registered subcommand")
	live := -1
	for i, a := range sim.Command {
		if a == "--live" && i+1 < len(sim.Command) {
			live, _ = strconv.Atoi(sim.Command[i+1])
		}
	}
	assert.Positive(t, live, "it keeps trading (--live N), so the market moves")
	assert.Contains(t, *sim.Environment["DATABASE_URL"], "@postgres:5432/", "the database the API serves")
	for _, dep := range []string{"api", "worker"} {
		assert.Equal(t, "service_healthy", sim.DependsOn[dep].Condition, "the simulator waits for %s", dep)
	}
	// The profile adds the simulator and nothing else.
	assert.ElementsMatch(t, append(plain.ServiceNames(), "simulator"), p.ServiceNames())
}

func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	df := string(raw)
	assert.Equal(t, 2, strings.Count(df, "\nFROM "), "multi-stage: a build stage and a runtime stage")
	assert.Contains(t, df, "CGO_ENABLED=0", "static binary")
	// It builds the production binary, never the development one (cmd/tokenscope-dev embeds the
	// Temporal server and UI); TestProductionBinaryHasNoTemporalServer checks what that links.
	builds := regexp.MustCompile(`(?m)^RUN .*\bgo build\b.*$`).FindAllString(df, -1)
	require.Len(t, builds, 1, "one go build")
	assert.Regexp(t, `-o /out/tokenscope \./cmd/tokenscope$`, builds[0])
	for _, line := range strings.Split(df, "\n") {
		if !strings.HasPrefix(line, "#") {
			assert.NotContains(t, line, "tokenscope-dev")
		}
	}
	assert.Contains(t, df, `ENTRYPOINT ["/usr/local/bin/tokenscope"]`)
	assert.Contains(t, df, "USER nonroot")
}
