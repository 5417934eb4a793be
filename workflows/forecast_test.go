package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/forecast"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// TestForecastHoldsTheSession: the forecast a session's configuration gets before its
// first call (starter start --estimate) holds what the session then costs, measured as
// the cost benchmark measures it at realistic timing (turn latencies, 30-minute batches
// run spread over their time): a short session (25 hypotheses, a size the figures were
// not measured at) against the fake providers and their simulated science, on both
// providers, with caching and with caching and batches, and batched with the fake's
// batches caching nothing (the high end's bound); and with half the boundary matches
// played as debates, whose turns are ordinary calls.
func TestForecastHoldsTheSession(t *testing.T) {
	figures := forecast.Measured()
	for _, m := range []struct {
		provider, model string
		debates         float64 // the debate share
	}{{"openai", "gpt-6-sol", 0}, {"anthropic", "claude-sonnet-5-5", 0}, {"anthropic", "claude-sonnet-5-5", 0.5}} {
		for _, mode := range []costMode{{kind: modeCache}, {kind: modeBatch, batch: true}, {kind: modeBatchNoCache, batch: true, noCache: true}} {
			t.Run(fmt.Sprintf("%s/debates %g/%s", m.model, m.debates, mode.kind), func(t *testing.T) {
				w := &world{seed: 21, quality: map[string]float64{}}
				// On the moving clock, as the figures were measured: turns take their
				// latencies, batches 30 minutes, their requests spread over that time.
				h, _ := batchHarness(t, providertest.Options{Answer: w.answer, BatchNoCache: mode.noCache, Seed: 3,
					BatchDelay: 30 * time.Minute, BatchSpread: true})
				req := goal(25)
				req.Config.Provider, req.Config.Model, req.Config.Batch = m.provider, m.model, mode.batch
				req.Config.ConvergenceRounds = 1000 // research to max_hypotheses, as the forecast assumes
				req.Config.Seed = 21
				req.Config.DebateShare = m.debates
				req = req.WithDefaults()
				est, err := forecast.Forecast(req.Config, figures, provider.DefaultPrices())
				if err != nil {
					t.Fatal(err)
				}
				(&turnClock{scale: modelPace(m.model)}).run(h, req)
				got := query[StateView](h, QueryState, Page{Limit: MaxPageLimit}).Usage.CostUSD
				t.Logf("measured $%.4f, forecast $%.4f to $%.4f (expected $%.4f)", got, est.Low, est.High, est.Expected)
				if got == 0 || got < est.Low || got > est.High {
					t.Errorf("measured $%.4f, outside the forecast $%.4f to $%.4f", got, est.Low, est.High)
				}
				// Where the session caches as the benchmark did, the expected figure is close;
				// not with debates, whose turns the forecast prices as comparisons while the
				// world leaves the advocates' and judges' answers to the fake's short default.
				if !mode.noCache && m.debates == 0 && (got < 0.9*est.Expected || got > 1.1*est.Expected) {
					t.Errorf("measured $%.4f, over 10%% from the forecast's expected $%.4f", got, est.Expected)
				}
			})
		}
	}
}
