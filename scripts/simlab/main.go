// Command simlab is the simulated lab of `make demo-lab` (scripts/demo-lab.sh): it runs
// the experiment a session planned for one of its hypotheses and writes the table the lab
// exports (simulator.Lab), whose true effect follows the hypothesis's hidden quality as
// the offline simulator drew it (research.Hypothesis.Latent, kept in the session store),
// plus the lab's noise. With --pilot it writes a table of no effect instead: the lab's
// earlier data, which the analyst reads the columns of before any experiment is planned.
//
// No lab knows the true effect; simlab prints it on stderr, for the demo's reader, never
// into the table. A hypothesis no simulator wrote (a real model's, a scientist's) has no
// hidden quality, and simlab refuses it with that reason.
//
//	simlab --pilot --out pilot.csv
//	simlab --session ID --hypothesis h-0003 --out result.csv [--store DIR] [--n 40] [--seed N]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "simlab:", err)
		os.Exit(1)
	}
}

type options struct {
	pilot                           bool
	session, hypothesis, store, out string
	n                               int
	seed                            uint64
}

func parse(args []string, errOut io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("simlab", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.BoolVar(&o.pilot, "pilot", false, "write the lab's earlier data: two arms, no effect")
	fs.StringVar(&o.session, "session", "", "the session's ID")
	fs.StringVar(&o.hypothesis, "hypothesis", "", "the hypothesis tested (h-0003)")
	fs.StringVar(&o.store, "store", envOr("COSCI_STORE", ".data/sessions"), "the session store (a directory), where the hypothesis's hidden quality is")
	fs.StringVar(&o.out, "out", "", "the CSV file to write")
	fs.IntVar(&o.n, "n", 40, "samples per arm")
	fs.Uint64Var(&o.seed, "seed", 0, "the lab's noise (default: drawn from the session and hypothesis, so a rerun writes the same table)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.out == "":
		return o, errors.New("--out FILE is required")
	case !o.pilot && (o.session == "" || o.hypothesis == ""):
		return o, errors.New("--session and --hypothesis are required (or --pilot)")
	case o.n < 3:
		return o, errors.New("--n must be at least 3")
	}
	if o.seed == 0 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s", o.session, o.hypothesis)
		o.seed = h.Sum64()
	}
	return o, nil
}

func run(ctx context.Context, args []string, errOut io.Writer) error {
	o, err := parse(args, errOut)
	if err != nil {
		return err
	}
	latent := 0.0
	if !o.pilot {
		if latent, err = hiddenQuality(ctx, o); err != nil {
			return err
		}
	}
	lab := simulator.Lab(latent, o.seed, simulator.LabDesign{N: o.n})
	if err := os.WriteFile(o.out, lab.CSV, 0o600); err != nil {
		return err
	}
	if o.pilot {
		fmt.Fprintf(errOut, "simlab: wrote %s: the lab's earlier data, %d samples per arm, no treatment effect\n", o.out, o.n)
		return nil
	}
	fmt.Fprintf(errOut, "simlab: wrote %s: %s's hidden quality %.2f gave a true effect of d = %.2f (the session never sees either)\n", o.out, o.hypothesis, latent, lab.Effect)
	return nil
}

// hiddenQuality reads the hypothesis's hidden quality from the session store.
func hiddenQuality(ctx context.Context, o options) (float64, error) {
	if _, err := os.Stat(o.store); err != nil {
		return 0, fmt.Errorf("no session store at %s: name the worker's with --store or COSCI_STORE", o.store)
	}
	st, err := store.Open(ctx, o.store)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	h, err := st.Hypothesis(ctx, o.session, o.hypothesis)
	if err != nil {
		return 0, err
	}
	if h.Latent == nil {
		return 0, fmt.Errorf("%s has no hidden quality: only the offline simulator's hypotheses can be tested in the simulated lab", o.hypothesis)
	}
	return *h.Latent, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
