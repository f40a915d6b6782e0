// Package envconf reads the settings that workers and clients share from the
// environment: the Temporal connection, the task queue and Redis.
package envconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// Defaults of the shared variables.
const (
	DefaultTemporalAddress = "127.0.0.1:7233"
	DefaultNamespace       = "default"
	DefaultTaskQueue       = "toolround"
	DefaultRedisURL        = "redis://127.0.0.1:6379/0"
)

// Temporal is how to reach the Temporal frontend, and the task queue that
// workers poll and clients submit to.
type Temporal struct {
	// Address is TEMPORAL_ADDRESS. Default "127.0.0.1:7233".
	Address string
	// Namespace is TEMPORAL_NAMESPACE. Default "default".
	Namespace string
	// TaskQueue is TASK_QUEUE. Default "toolround".
	TaskQueue string
	// TLS configures mTLS: TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY,
	// TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME. Default none.
	TLS TLS
	// APIKey is TEMPORAL_API_KEY (Temporal Cloud); it implies TLS.
	APIKey string
}

// TLS locates the files of an mTLS connection to Temporal.
type TLS struct {
	CertFile, KeyFile, CAFile, ServerName string
}

// TemporalFromEnv reads the Temporal connection from the environment.
func TemporalFromEnv() Temporal {
	return Temporal{
		Address:   Get("TEMPORAL_ADDRESS", DefaultTemporalAddress),
		Namespace: Get("TEMPORAL_NAMESPACE", DefaultNamespace),
		TaskQueue: Get("TASK_QUEUE", DefaultTaskQueue),
		TLS: TLS{
			CertFile: Get("TEMPORAL_TLS_CERT", ""), KeyFile: Get("TEMPORAL_TLS_KEY", ""),
			CAFile: Get("TEMPORAL_TLS_CA", ""), ServerName: Get("TEMPORAL_TLS_SERVER_NAME", ""),
		},
		APIKey: Get("TEMPORAL_API_KEY", ""),
	}
}

// RedisURL is REDIS_URL (default "redis://127.0.0.1:6379/0"); "" when it is
// set to "none".
func RedisURL() string {
	u := Get("REDIS_URL", DefaultRedisURL)
	if u == "none" {
		return ""
	}
	return u
}

// Get is the trimmed value of an environment variable, or def when it is
// unset or blank.
func Get(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// Dial connects a Temporal client. A nil logger discards the SDK's logs.
func (t Temporal) Dial(logger *slog.Logger) (tclient.Client, error) {
	opts, err := t.ClientOptions(logger)
	if err != nil {
		return nil, err
	}
	c, err := tclient.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to Temporal at %s (namespace %s): %w", t.Address, t.Namespace, err)
	}
	return c, nil
}

// ClientOptions are the SDK's options for this connection.
func (t Temporal) ClientOptions(logger *slog.Logger) (tclient.Options, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tlsCfg, err := t.TLS.Load(t.APIKey != "")
	if err != nil {
		return tclient.Options{}, err
	}
	opts := tclient.Options{
		HostPort:          t.Address,
		Namespace:         t.Namespace,
		Logger:            SDKLogger(logger),
		ConnectionOptions: tclient.ConnectionOptions{TLS: tlsCfg},
	}
	if t.APIKey != "" {
		opts.Credentials = tclient.NewAPIKeyStaticCredentials(t.APIKey)
	}
	return opts, nil
}

// Enabled reports whether any TLS setting is given.
func (t TLS) Enabled() bool {
	return t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" || t.ServerName != ""
}

// Load builds the *tls.Config; nil when TLS is off and no API key needs it.
func (t TLS) Load(apiKey bool) (*tls.Config, error) {
	if !t.Enabled() && !apiKey {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("temporal: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: TEMPORAL_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal: TEMPORAL_TLS_CA %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// SDKLogger is the Temporal SDK's logger over logger: the SDK's INFO lines
// (workers starting and stopping, pollers, ...) are written at DEBUG, so that
// the project's own lines (one a call) stand out at INFO; WARN and ERROR stay
// as they are. Workflow code logs through it too and uses WARN and above.
func SDKLogger(logger *slog.Logger) tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(demoteInfo{logger.Handler()}))
}

// demoteInfo writes INFO records at DEBUG.
type demoteInfo struct{ h slog.Handler }

func demoted(l slog.Level) slog.Level {
	if l >= slog.LevelInfo && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (d demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, demoted(l))
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demoted(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteInfo{d.h.WithAttrs(attrs)}
}
func (d demoteInfo) WithGroup(name string) slog.Handler { return demoteInfo{d.h.WithGroup(name)} }
