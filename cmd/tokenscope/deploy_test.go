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
	want := []string{"api", "migrate", "postgres", "redis", "temporal", "temporal-ui", "worker"}
	assert.ElementsMatch(t, want, p.ServiceNames())

	pg := p.Services["postgres"]
	assert.Regexp(t, `^postgres:\d+$`, pg.Image, "postgres pinned to a major version")
	require.NotNil(t, pg.HealthCheck)
	assert.Contains(t, strings.Join(pg.HealthCheck.Test, " "), "pg_isready")

	tmp := p.Services["temporal"]
	assert.Regexp(t, `^temporalio/auto-setup:\d+\.\d+\.\d+$`, tmp.Image)
	assert.Equal(t, "postgres12", *tmp.Environment["DB"], "Temporal is backed by the same Postgres")
	assert.Equal(t, "postgres", *tmp.Environment["POSTGRES_SEEDS"])
	assert.Equal(t, "service_healthy", tmp.DependsOn["postgres"].Condition)
	require.NotNil(t, tmp.HealthCheck)

	ui := p.Services["temporal-ui"]
	assert.Equal(t, "temporal:7233", *ui.Environment["TEMPORAL_ADDRESS"])
	assert.Equal(t, "8233", ui.Ports[0].Published)

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
