package connection

// Queries asked again when their answer is late. Temporal 1.29's matching service (the
// server inside the Temporal CLI v1.5.1, which `make server` and the tests run) hands a
// query to the session's worker before it registers where the answer goes: when the
// worker answers first, which a busy server's scheduling allows now and then (about one
// query in 2,000 on a loaded 2-core machine), the answer is dropped ("query task not found,
// or already expired" in the worker's log), and the query waits out the sticky queue's 5 s
// before the server asks again elsewhere (BENCHMARKS.md, "The desk"). Temporal 1.30 registers
// first (temporalio/temporal a93252f). A query is read-only, so asking it again is safe:
// the second ask reaches the same worker's cache and answers in milliseconds.

import (
	"context"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
)

// hedgeAfter is how long a query waits for its answer before it is asked again: over a
// query's time on a loaded machine (p99 80 to 180 ms beside a spin loop on 2 cores), so
// that few are asked twice, and short enough that a page whose query was lost still shows
// within a second when the second ask is slow too: after a lost answer the server takes
// the session's worker off it, and queries replay the session's run until its next
// workflow task (a second ask took 540 ms so, at a load of 5).
const hedgeAfter = 250 * time.Millisecond

// queryHedge asks a query again once after its delay, and returns the first answer.
type queryHedge struct {
	interceptor.ClientInterceptorBase
	after time.Duration
}

func (h queryHedge) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &hedgedQueries{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, after: h.after}
}

type hedgedQueries struct {
	interceptor.ClientOutboundInterceptorBase
	after time.Duration
}

type queryAnswer struct {
	v   converter.EncodedValue
	err error
}

// QueryWorkflow asks the query, and again if no answer came within the delay; the first
// answer wins, and an error only if both ended in one. The ask that loses is cancelled.
func (h *hedgedQueries) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (converter.EncodedValue, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make(chan queryAnswer, 2) // neither ask blocks once the other has won
	ask := func() {
		v, err := h.Next.QueryWorkflow(ctx, in)
		answers <- queryAnswer{v, err}
	}
	go ask()
	timer := time.NewTimer(h.after)
	defer timer.Stop()
	select {
	case a := <-answers:
		return a.v, a.err
	case <-timer.C:
		go ask()
	}
	a := <-answers
	if a.err == nil {
		return a.v, nil
	}
	if b := <-answers; b.err == nil {
		return b.v, nil
	}
	return a.v, a.err
}
