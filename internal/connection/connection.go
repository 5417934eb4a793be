// Package connection dials the Temporal server the way every cosci program does: options
// from the environment and temporal.toml profiles (go.temporal.io/sdk/contrib/envconfig),
// logs through log/slog, queries asked again when their answer is late (hedge.go), and an
// error that says what to do when no server answers.
package connection

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
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
	if opts.Namespace == "" {
		opts.Namespace = client.DefaultNamespace
	}
	if logger != nil {
		opts.Logger = sdklog.NewStructuredLogger(logger)
	}
	return opts, nil
}

// Dial connects to Temporal, or explains how to get a server running. Each of with
// amends the options first: the worker's metrics handler, tracing interceptor and data
// converter. A query whose answer is late is asked again (hedge.go).
func Dial(logger *slog.Logger, with ...func(*client.Options)) (client.Client, error) {
	opts, err := Options(logger)
	if err != nil {
		return nil, err
	}
	for _, f := range with {
		f(&opts)
	}
	opts.Interceptors = append(opts.Interceptors, &queryHedge{after: hedgeAfter})
	c, err := client.Dial(opts)
	if err != nil {
		if Local(opts.HostPort) {
			return nil, fmt.Errorf("no Temporal server at %s (%v): start the local one with `make server`, or set TEMPORAL_ADDRESS", opts.HostPort, err)
		}
		return nil, fmt.Errorf("no Temporal server answers at %s (%v): check TEMPORAL_ADDRESS, or the temporal.toml profile in use (TEMPORAL_PROFILE), and that the server is up", opts.HostPort, err)
	}
	return c, nil
}

// Local says whether a Temporal address is the local dev server's default (port 7233 on
// this machine), the one `make server` starts: where hints about make targets and the
// dev server's Web UI on port 8233 are right, and nowhere else.
func Local(hostPort string) bool {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || port != "7233" {
		return false
	}
	switch host {
	case "127.0.0.1", "localhost", "::1", "":
		return true
	}
	return false
}

// EnsureSearchAttributes adds to the namespace the custom search attributes it lacks (name
// to type: Keyword, Int, Double...) and returns the names it added. A dev server started on
// an existing database does not register attributes added to its command line since, so
// the worker makes sure before any workflow needs them: a missing one would fail every
// workflow task that sets it.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]string) ([]string, error) {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("cannot list the search attributes of namespace %s: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		if _, ok := have.GetCustomAttributes()[name]; ok {
			continue
		}
		v, ok := enumspb.IndexedValueType_value["INDEXED_VALUE_TYPE_"+strings.ToUpper(typ)]
		if !ok {
			return nil, fmt.Errorf("search attribute %s has unknown type %q", name, typ)
		}
		missing[name] = enumspb.IndexedValueType(v)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	}); err != nil {
		return nil, fmt.Errorf("cannot add search attributes to namespace %s (add them with `temporal operator search-attribute create`): %w", namespace, err)
	}
	added := make([]string, 0, len(missing))
	for name := range missing {
		added = append(added, name)
	}
	slices.Sort(added)
	return added, nil
}
