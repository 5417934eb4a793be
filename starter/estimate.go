package main

// `starter start --estimate`: the forecast of what a session would cost, printed instead
// of starting it (internal/forecast).

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/cosci-dev/cosci/internal/forecast"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
)

// printEstimate writes the forecast of a session of req to w. Nothing is started and no
// model is called: the request was checked as starting it checks it (parseStart), but for
// the tools, which only the workers' catalog knows.
func printEstimate(w io.Writer, req research.Request) error {
	c := req.Config
	e, err := forecast.Forecast(c, forecast.Measured(), provider.DefaultPrices())
	if err != nil {
		return err
	}
	if e.Free() {
		fmt.Fprintf(w, "forecast: $0: the %s provider calls no paid model (%d hypotheses)\n", e.Provider, c.MaxHypotheses)
		fmt.Fprintln(w, "nothing was started")
		return nil
	}
	fmt.Fprintf(w, "forecast for %d hypotheses on %s (%s), %s:\n", c.MaxHypotheses, e.Model, e.Provider, e.Mode)
	if e.Priced {
		fmt.Fprintf(w, "  $%.2f to $%.2f, about $%.2f (list prices read %s)\n", e.Low, e.High, e.Expected, provider.PricesAsOf)
	} else {
		fmt.Fprintf(w, "  cost unknown: %s has no built-in price (prices read %s)\n", e.Model, provider.PricesAsOf)
	}
	fmt.Fprintf(w, "  %s requests (%s batched), %s input tokens (%.0f%% from cache), %s output tokens\n\n",
		count(e.Requests), count(e.Batched), research.Thousands(e.Usage.PromptTokens),
		100*float64(e.Usage.CachedTokens)/float64(max(1, e.Usage.PromptTokens)), research.Thousands(e.Usage.CompletionTokens))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\trequests\tinput tokens\toutput tokens\tabout\trange\t")
	for _, a := range e.Agents {
		about, span := "-", "-"
		if e.Priced {
			about, span = fmt.Sprintf("$%.2f", a.Expected), fmt.Sprintf("$%.2f-$%.2f", a.Low, a.High)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Agent, count(a.Requests),
			research.Thousands(a.Usage.PromptTokens), research.Thousands(a.Usage.CompletionTokens), about, span)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nassumes:")
	for _, s := range e.Assumes {
		fmt.Fprintln(w, "  -", s)
	}
	if len(c.Tools) > 0 {
		fmt.Fprintln(w, "  - the tools are not checked against the workers' catalog (starting checks them)")
	}
	fmt.Fprintln(w, "nothing was started and no model was called")
	return nil
}

// count is an expected number of requests, whole.
func count(f float64) string { return research.Thousands(int(math.Round(f))) }
