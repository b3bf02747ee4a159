package devserver

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// slogLogger is the embedded server's logger over the service's slog handler, so its lines
// (its own and its internal SDK workers') have the service's shape. Lines below min are
// dropped. Once the server is stopping, its warnings and errors (pollers and peers meeting the
// ports it is closing) are logged at debug: they describe the shutdown, not a fault.
type slogLogger struct {
	log      *slog.Logger
	min      slog.Level
	stopping *atomic.Bool
}

var (
	_ tlog.Logger     = slogLogger{}
	_ tlog.WithLogger = slogLogger{}
)

func newSlogLogger(log *slog.Logger, level string, stopping *atomic.Bool) slogLogger {
	var min slog.Level
	if err := min.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		min = slog.LevelWarn
	}
	return slogLogger{log: log, min: min, stopping: stopping}
}

func (l slogLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	if level > slog.LevelInfo && l.stopping.Load() {
		level = slog.LevelDebug
	} else if level < l.min {
		return
	}
	if !l.log.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]slog.Attr, 0, len(tags))
	for _, t := range tags {
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	l.log.LogAttrs(context.Background(), level, msg, attrs...)
}

func (l slogLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l slogLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l slogLogger) Warn(msg string, tags ...tag.Tag)  { l.emit(slog.LevelWarn, msg, tags) }
func (l slogLogger) Error(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal log at error; Panic then panics and Fatal ends the process, as the
// server's own logger does.
func (l slogLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Panic(msg string, tags ...tag.Tag) {
	l.emit(slog.LevelError, msg, tags)
	panic(msg)
}
func (l slogLogger) Fatal(msg string, tags ...tag.Tag) {
	l.emit(slog.LevelError, msg, tags)
	os.Exit(1)
}

// With returns l with tags added to every line.
func (l slogLogger) With(tags ...tag.Tag) tlog.Logger {
	args := make([]any, 0, len(tags))
	for _, t := range tags {
		args = append(args, slog.Any(t.Key(), t.Value()))
	}
	l.log = l.log.With(args...)
	return l
}
