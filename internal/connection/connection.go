// Package connection dials the Temporal server the way every cosci program does: options
// from the environment and temporal.toml profiles (go.temporal.io/sdk/contrib/envconfig),
// logs through log/slog, and an error that says what to do when no server answers.
package connection

import (
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	sdklog "go.temporal.io/sdk/log"
)

// Options loads the client options from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_PROFILE and the temporal.toml config file, with the SDK's defaults
// (127.0.0.1:7233, namespace "default") where none is set.
func Options(logger *slog.Logger) (client.Options, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return client.Options{}, fmt.Errorf("cannot read the Temporal client configuration: %w", err)
	}
	if opts.HostPort == "" {
		opts.HostPort = client.DefaultHostPort
	}
	if logger != nil {
		opts.Logger = sdklog.NewStructuredLogger(logger)
	}
	return opts, nil
}

// Dial connects to Temporal, or explains how to get a server running.
func Dial(logger *slog.Logger) (client.Client, error) {
	opts, err := Options(logger)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("no Temporal server at %s (%v): run `make server`, or set TEMPORAL_ADDRESS", opts.HostPort, err)
	}
	return c, nil
}
