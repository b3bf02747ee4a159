// Package pgcluster runs throwaway PostgreSQL 15 clusters for tests and for the benchmark's
// replica rows: a primary of the caller's own (never the shared server on 5432) and streaming
// standbys of it made with pg_basebackup -R, each on a free loopback port, in a temporary
// directory owned by the postgres user, stopped and removed when the test (or the TB's owner)
// ends. Run as root (CI), the server programs run as postgres through runuser; run as another
// user, they run as that user. Anything missing fails with a message saying what; nothing skips.
package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/internal/loopback"
)

// BinDir holds the server programs: Debian's /usr/lib/postgresql/N/bin, the newest N installed
// (15 on the machines this runs on).
var BinDir = func() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	best, bestN := "/usr/lib/postgresql/15/bin", 0
	for _, d := range dirs {
		n, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if err == nil && n > bestN {
			best, bestN = filepath.Dir(d), n
		}
	}
	return best
}()

// TB is what a cluster needs of its owner: *testing.T and *testing.B satisfy it; a program
// passes its own (Fatalf ends the work in progress, Cleanup runs when the owner is done).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Cluster is one running server.
type Cluster struct {
	t    TB
	Name string
	Dir  string // data directory
	Port int
	root string // the temporary directory holding Dir and the socket
}

// Options shape a primary.
type Options struct {
	// SyncStandbys sets synchronous_standby_names ("" keeps replication asynchronous; "*"
	// makes every commit wait for one standby's flush).
	SyncStandbys string
	// Conf is extra postgresql.conf lines.
	Conf []string
}

// NewPrimary creates, configures and starts a primary.
func NewPrimary(t TB, o Options) *Cluster {
	t.Helper()
	c := newCluster(t, "primary")
	c.run("initdb", "-D", c.Dir, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C")
	conf := []string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(c.Port),
		"unix_socket_directories = '" + c.root + "'",
		"wal_level = replica",
		"max_wal_senders = 10",
		"hot_standby = on",
		"hot_standby_feedback = on",
		"fsync = off", // a test cluster: durability across an OS crash is not what is tested
		"shared_preload_libraries = 'pg_stat_statements'",
		"pg_stat_statements.track = all",
		"max_connections = 200",
		"wal_keep_size = '256MB'",
	}
	if o.SyncStandbys != "" {
		conf = append(conf, "synchronous_standby_names = '"+o.SyncStandbys+"'")
	}
	conf = append(conf, o.Conf...)
	c.appendConf(conf)
	// Replication connections from loopback (initdb's trust lines cover local sockets and 127.0.0.1).
	c.appendFile("pg_hba.conf", "host replication all 127.0.0.1/32 trust\n")
	c.Start()
	return c
}

// NewStandby makes a streaming standby of c with pg_basebackup -R and starts it.
func (c *Cluster) NewStandby(name string) *Cluster {
	c.t.Helper()
	s := newCluster(c.t, name)
	c.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres",
		"-D", s.Dir, "-R", "-X", "stream", "--no-sync", "-c", "fast")
	s.appendConf([]string{
		"port = " + strconv.Itoa(s.Port),
		"unix_socket_directories = '" + s.root + "'",
		"cluster_name = '" + name + "'",
		// Once promoted it has no standby of its own: a copied synchronous_standby_names would
		// make every commit wait forever.
		"synchronous_standby_names = ''",
		"primary_conninfo = 'host=127.0.0.1 port=" + strconv.Itoa(c.Port) + " user=postgres application_name=" + name + "'",
	})
	s.Start()
	return s
}

func newCluster(t TB, name string) *Cluster {
	t.Helper()
	for _, p := range []string{"initdb", "pg_ctl", "pg_basebackup", "postgres"} {
		if _, err := os.Stat(filepath.Join(BinDir, p)); err != nil {
			t.Fatalf("pgcluster: %s is missing (install postgresql): %v", filepath.Join(BinDir, p), err)
		}
	}
	root, err := os.MkdirTemp("", "pgcluster-"+name+"-")
	if err != nil {
		t.Fatalf("pgcluster: %v", err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgcluster: running as root needs the postgres user to run the server: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(root, uid, gid); err != nil {
			t.Fatalf("pgcluster: %v", err)
		}
	}
	ports, err := loopback.FreePorts("127.0.0.1", 1)
	if err != nil {
		t.Fatalf("pgcluster: %v", err)
	}
	c := &Cluster{t: t, Name: name, Dir: filepath.Join(root, "data"), Port: ports[0], root: root}
	t.Cleanup(func() {
		c.stopQuietly()
		_ = os.RemoveAll(root)
	})
	return c
}

// command builds a server program's command, as postgres when running as root.
func command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	path := filepath.Join(BinDir, prog)
	if os.Geteuid() == 0 {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

func (c *Cluster) run(prog string, args ...string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := command(ctx, prog, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("pgcluster %s: %s %s: %v\n%s", c.Name, prog, strings.Join(args, " "), err, out)
	}
}

func (c *Cluster) appendConf(lines []string) {
	c.appendFile("postgresql.conf", "\n"+strings.Join(lines, "\n")+"\n")
}

func (c *Cluster) appendFile(name, text string) {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.Dir, name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		c.t.Fatalf("pgcluster %s: %v", c.Name, err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		c.t.Fatalf("pgcluster %s: %v", c.Name, err)
	}
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.Dir, "-l", filepath.Join(c.root, "log"), "-w", "-t", "60", "start")
}

// Stop shuts the server down (fast mode).
func (c *Cluster) Stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.Dir, "-m", "fast", "-w", "stop")
}

func (c *Cluster) stopQuietly() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = command(ctx, "pg_ctl", "-D", c.Dir, "-m", "immediate", "-w", "stop").Run()
	// After a SIGKILL of the postmaster its backends end on their own; wait for the socket lock
	// to go so the directory is removed with nothing running in it.
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(c.Dir, "postmaster.pid")); err != nil {
			break
		}
		if !c.postmasterAlive() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) postmasterPID() int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(string(bytes.TrimSpace(bytes.SplitN(b, []byte("\n"), 2)[0])))
	return pid
}

func (c *Cluster) postmasterAlive() bool {
	pid := c.postmasterPID()
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// Kill sends SIGKILL to the postmaster, as a host failure would end it (its backends notice
// and exit on their own).
func (c *Cluster) Kill() {
	c.t.Helper()
	pid := c.postmasterPID()
	if pid == 0 {
		c.t.Fatalf("pgcluster %s: no postmaster.pid", c.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatalf("pgcluster %s: kill %d: %v", c.Name, pid, err)
	}
}

// Promote turns a standby into a primary and waits until it accepts writes.
func (c *Cluster) Promote() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.Dir, "-w", "-t", "60", "promote")
}

// URL is a connection URL for database db on the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// Conn connects to database db, closed when the test ends.
func (c *Cluster) Conn(db string) *pgx.Conn {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL(db))
	if err != nil {
		c.t.Fatalf("pgcluster %s: connect: %v", c.Name, err)
	}
	c.t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// WaitReplayed waits until standby has replayed everything c has written so far.
func (c *Cluster) WaitReplayed(standby *Cluster) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := c.Conn("postgres")
	s := standby.Conn("postgres")
	var target string
	if err := p.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target); err != nil {
		c.t.Fatalf("pgcluster %s: %v", c.Name, err)
	}
	for {
		var done bool
		if err := s.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", target).Scan(&done); err != nil {
			c.t.Fatalf("pgcluster %s: %v", standby.Name, err)
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("pgcluster %s: did not replay %s within a minute", standby.Name, target)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
