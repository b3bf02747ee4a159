// Package browsertest starts headless Chromium for tests that drive a page in a real browser
// (chromedp over the DevTools protocol). It exists for other packages' tests only.
//
// Chromium is Debian's `chromium` package at /usr/bin/chromium (CHROMIUM overrides the path);
// .ci/run installs it. A test that needs it fails, never skips, when it is missing.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package installs the browser.
const DefaultPath = "/usr/bin/chromium"

// Path is the Chromium binary the tests use: $CHROMIUM, else DefaultPath.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return DefaultPath
}

// New starts a headless Chromium with a fresh profile and returns a tab's context; the browser
// stops when the test ends. Every action on the context is bounded by timeout.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := Path()
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("chromium not found at %s (install Debian's chromium package: apt-get install -y chromium; or set CHROMIUM): %v", path, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
		// Without these Chromium reaches for Google's services at startup, which this machine
		// (and CI) refuses noisily.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return ctx
}

// ArtifactDir is test-artifacts/<test name> at the module root (ignored by git), created empty
// of nothing: files from earlier runs of the same test are overwritten, not removed.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "test-artifacts", regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// Screenshot saves a PNG of what the tab shows (the window, not the whole scrollable page) as
// name (e.g. "docs.png") in ArtifactDir and logs its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(ArtifactDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
