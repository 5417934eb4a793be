package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/connection"
	"github.com/cosci-dev/cosci/workflows"
)

// Where starter writes; tests swap them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

// How long a single call may take before starter explains what is wrong. A query's is
// over twice the sticky queue's 5 s, as the desk's is (desk/backend.go): the server's
// fallback to the session's task queue then has time within the SDK's half of it.
const (
	rpcTimeout    = 15 * time.Second
	queryTimeout  = 20 * time.Second
	updateTimeout = 20 * time.Second
)

// maxSynopsis is the widest command synopsis the usage text keeps beside its summary.
const maxSynopsis = 50

func usage(w io.Writer) {
	fmt.Fprint(w, "starter is the scientist's client for cosci research sessions.\n\nUsage: starter <command> [arguments]\n\nCommands:\n")
	// Summaries line up after the synopses; a synopsis too long for that gets a line of
	// its own, with its summary under it.
	width := 0
	for _, c := range commands {
		if n := utf8.RuneCountInString(c.name + " " + c.args); n <= maxSynopsis {
			width = max(width, n)
		}
	}
	for _, c := range commands {
		synopsis := c.name + " " + c.args
		if n := utf8.RuneCountInString(synopsis); n <= maxSynopsis {
			fmt.Fprintf(w, "  %s%s  %s\n", synopsis, strings.Repeat(" ", width-n), c.summary)
		} else {
			fmt.Fprintf(w, "  %s\n  %s  %s\n", synopsis, strings.Repeat(" ", width), c.summary)
		}
	}
	fmt.Fprint(w, `
status, progress, state and history take --json; state and history take --offset N and --limit N.
Run 'starter <command> -h' for a command's flags.

Environment:
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE  which Temporal server (default 127.0.0.1:7233)
  COSCI_STORE                                          the workers' session store: a directory or a postgres:// URL
                                                       (password in PGPASSWORD; default .data/sessions)
  COSCI_UI_URL                                         Web UI base (default http://localhost:8233)
  COSCI_KEYS_FILE, COSCI_KEYS                          the lab's encryption keys, for encrypted sessions (see docs/operating.md)
  COSCI_CODEC_TOKEN_FILE, COSCI_CODEC_TOKEN            the bearer token codec-server requires (a file holding it, or itself)
  COSCI_DEBUG=1                                        debug logs on stderr
`)
}

// exitError ends starter with a code; its message, if any, goes to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf is a mistake in the command line: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{2, fmt.Sprintf(format, args...)}
}

// errUsage reports a command line the flag package has already complained about.
var errUsage = &exitError{code: 2}

// newFlagSet makes a subcommand's flags. A mistake in them gets a one-line hint; -h
// gets the command's full usage, on stdout.
func newFlagSet(name, args, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&storeFlag, "store", "", "the workers' session store, for reports and sessions Temporal no longer keeps: a directory or a postgres:// URL (env COSCI_STORE, default "+defaultStore+")")
	storeMigrating = optionalBool{}
	fs.Var(&storeMigrating, "store-migrating", "with encryption, also read store records that are not sealed to their session (written before encryption was turned on, or by an earlier version); for a migration only, see docs/operating.md (env COSCI_STORE_MIGRATING)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Run 'starter %s -h' for its usage.\n", name)
	}
	help[fs] = func(w io.Writer) {
		fmt.Fprintf(w, "Usage: starter %s %s\n\n%s\n", name, args, summary)
		if hasFlags(fs) {
			fs.SetOutput(w)
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
			fs.SetOutput(stderr)
		}
	}
	return fs
}

// help prints each flag set's full usage.
var help = map[*flag.FlagSet]func(io.Writer){}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// wantsHelp reports whether the arguments ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// parse reads flags wherever they stand among the arguments, so that both
// `starter state ID --limit 5` and `starter state --limit 5 ID` work, and returns the
// other arguments. Everything after "--" is an argument.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if wantsHelp(args) {
		help[fs](stdout)
		return nil, flag.ErrHelp
	}
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// sessionArg parses a command that takes exactly one session ID.
func sessionArg(fs *flag.FlagSet, args []string) (string, error) {
	rest, err := parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		return "", usageErrorf("%s needs one session ID: starter %s <session-id> (find them with: starter list)", fs.Name(), fs.Name())
	}
	return rest[0], nil
}

// logger logs for debugging only, when COSCI_DEBUG is set.
func logger() *slog.Logger {
	if os.Getenv("COSCI_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dial connects to Temporal and says which namespace it uses (for Web UI links).
func dial() (client.Client, string, error) {
	log := logger()
	namespace := client.DefaultNamespace
	if opts, err := connection.Options(log); err == nil && opts.Namespace != "" {
		namespace = opts.Namespace
	}
	keys, err := labKeys()
	if err != nil {
		return nil, "", err
	}
	c, err := connection.Dial(log, codec.ClientOptions(keys))
	if err != nil {
		return nil, "", err
	}
	return c, namespace, nil
}

// uiLink is the session's page in the Temporal Web UI: under COSCI_UI_URL, or the dev
// server's UI (port 8233) when the starter talks to the local dev server. It is "" when
// neither says where the UI of the server in use is: no link rather than a wrong one.
func uiLink(namespace, id string) string {
	base := strings.TrimRight(os.Getenv("COSCI_UI_URL"), "/")
	if base == "" {
		if !localServer() {
			return ""
		}
		base = "http://localhost:8233"
	}
	return base + "/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(id)
}

// printUILink says where the Web UI shows a session, when that is known.
func printUILink(namespace, id string) {
	if link := uiLink(namespace, id); link != "" {
		fmt.Fprintln(stderr, "web UI:", link)
	}
}

// localServer says whether the starter talks to the local dev server (`make server`).
func localServer() bool {
	opts, err := connection.Options(nil)
	return err == nil && connection.Local(opts.HostPort)
}

// startWorkerHint says how to get a worker running, in words that fit where the user is:
// the make target on a developer's machine, the deployment's workers elsewhere.
func startWorkerHint() string {
	if localServer() {
		return "start one with: make worker (or go run ./worker)"
	}
	return "check that the deployment's workers are running and polling task queue " + workflows.TaskQueue +
		" (temporal task-queue describe --task-queue " + workflows.TaskQueue + ")"
}

// explain turns what Temporal says into what the scientist can act on.
func explain(err error, id string) error {
	var notFound *serviceerror.NotFound
	var queryFailed *serviceerror.QueryFailed
	var invalid *serviceerror.InvalidArgument
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &notFound):
		if strings.Contains(notFound.Message, "already completed") {
			return fmt.Errorf("session %s has ended and takes no more commands: see its result with: starter result %s", id, id)
		}
		return &notInTemporal{id}
	case workerDown(err):
		return fmt.Errorf("session %s did not answer in time: no worker is taking its tasks, or the workers are too busy; %s", id, startWorkerHint())
	case errors.As(err, &queryFailed):
		return fmt.Errorf("session %s could not answer: %s", id, queryFailed.Message)
	case errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Message), "search attribute"):
		if localServer() {
			return fmt.Errorf("the Temporal server does not know cosci's search attributes (%s): restart it with: make server, or start a worker, which registers them", invalid.Message)
		}
		return fmt.Errorf("the Temporal server does not know cosci's search attributes (%s): start a worker, which registers the missing ones, or register them with temporal operator search-attribute create (docs/production.md)", invalid.Message)
	}
	return err
}

// workerDown reports an error that means no worker took the query or update in time.
func workerDown(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline) ||
		strings.Contains(err.Error(), "no poller seen")
}

// printJSON writes v indented, for --json.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// withTemporal runs a command that talks to Temporal once its command line has parsed
// (parseErr is nil), so a usage error never waits for the network: it dials, runs the
// command and closes the client.
func withTemporal(parseErr error, run func(c client.Client, namespace string) error) error {
	if parseErr != nil {
		return parseErr
	}
	c, namespace, err := dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return run(c, namespace)
}

// parseFlags parses a command that takes flags only: words left over are refused, and
// hint says where the input goes instead ("" for none).
func parseFlags(fs *flag.FlagSet, args []string, hint string) error {
	rest, err := parse(fs, args)
	if err == nil && len(rest) > 0 {
		err = usageErrorf("%s takes no arguments (got %q)%s", fs.Name(), rest[0], hint)
	}
	return err
}
