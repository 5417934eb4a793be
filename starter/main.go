// Command starter is the scientist's client for cosci: it starts research sessions, shows
// how they are doing, steers them and prints what they found. A session is a Temporal
// workflow; its session ID is the workflow ID.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cosci-dev/cosci/internal/session"
)

// command is one subcommand: its name, what it takes, and a one-line description.
type command struct {
	name, args, summary string
	run                 func(ctx context.Context, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"start", `--goal "..." [flags]`, "start a research session and print its ID", cmdStart},
		{"list", listArgs, "list sessions, newest first, with their goals (archived ones with --archived)", cmdList},
		{"status", "<id>", "lifecycle state, scientist, goal and times", cmdStatus},
		{"progress", "<id>", "hypotheses, reviews, matches, rounds and elapsed time", cmdProgress},
		{"state", "<id>", "goal, configuration, agents, usage and the ranking (paged)", cmdState},
		{"history", "<id>", "the session's own event log, one line per event (paged)", cmdHistory},
		{"watch", "<id>", "follow a session live until it ends (Ctrl-C stops watching only)", cmdWatch},
		{"result", "<id>", "wait for a session to end and print its result", cmdResult},
		{"report", "<id> [--html] [--out DIR]", "print the report an ended session wrote, or fetch all of it into a folder", cmdReport},
	}
	// The scientist's commands, from the table that also names and parses them for the workflow.
	for _, c := range session.Commands {
		commands = append(commands, command{c.Name, commandArgs[c.Name], c.Summary, cmdUpdate(c.Name)})
	}
	commands = append(commands, []command{
		{"ask", askArgs, "ask a session a question or for a change in plain words; --confirm a proposal of its answer", cmdAsk},
		{"chat", chatArgs, "talk with a session: its answers, and y/n before each proposal is confirmed", cmdChat},
		{"continue", continueArgs, "start the next session of a conversation from a finished or suspended one", cmdBranch("continue")},
		{"fork", forkArgs, "start a new conversation from any checkpoint of a session", cmdBranch("fork")},
		{"tree", treeArgs, "show a session's lineage: its root and every session started from it", cmdTree},
		{"archive", archiveArgs, "archive an ended session: hidden from list, still readable", cmdArchive},
		{"schedule", scheduleArgs, "recurring reviews: create, list, delete or trigger a schedule", cmdSchedule},
		{"heartbeat", heartbeatArgs, "start the heartbeat session that verifies the latest session's leads", cmdHeartbeat},
		{"data", dataArgs, "add a lab table to a session: read, refused with the reason or stored by digest", cmdData},
		{"experiment", experimentArgs, "plan, confirm (pre-register), give a result to, withdraw or list a session's experiments", cmdExperiment},
		{"tools", toolsArgs, "list the tools the workers offer, for --tools", cmdTools},
		{"keygen", keygenArgs, "print a new encryption key for the lab's key file", cmdKeygen},
		{"codec-server", codecServerArgs, "serve /encode and /decode so the Web UI and temporal CLI read encrypted sessions", cmdCodecServer},
	}...)
}

func main() { os.Exit(run(os.Args[1:])) }

// run dispatches to a subcommand and turns its error into an exit code: 0 ok, 1 failure,
// 2 usage error. Everything it prints goes through a terminal (terminal.go), so no text
// from a model, a tool or a person can act on the scientist's terminal.
func run(args []string) int {
	out, errOut := newTerminal(stdout), newTerminal(stderr)
	stdout, stderr = out, errOut
	defer func() {
		_, _ = out.Flush(), errOut.Flush()
		stdout, stderr = out.w, errOut.w
	}()
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return exitCode(c.run(ctx, args[1:]))
	}
	fmt.Fprintf(stderr, "starter: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

func exitCode(err error) int {
	var e *exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &e):
		if e.msg != "" {
			fmt.Fprintln(stderr, e.msg)
		}
		return e.code
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "interrupted")
		return 1
	}
	fmt.Fprintln(stderr, err)
	return 1
}
