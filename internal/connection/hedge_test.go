package connection

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
)

// answer is a query's answer as a test reads it: the text it carries.
type answer string

func (a answer) HasValue() bool { return a != "" }

func (a answer) Get(valuePtr any) error {
	*(valuePtr.(*string)) = string(a)
	return nil
}

// asks is a server whose answers the test scripts, one a call, in order.
type asks struct {
	interceptor.ClientOutboundInterceptorBase
	mu        sync.Mutex
	script    []reply
	calls     int
	again     chan struct{} // closed when the query is asked a second time
	first     chan struct{} // closed when the first ask has answered
	cancelled []int         // the calls whose context ended, by number
	done      sync.WaitGroup
}

// reply is what a call gives: its answer or error, at once; or, lost, nothing until its
// context ends (a query whose answer the server dropped waits out its time); or, late,
// its answer only once the query has been asked again; or, last, only once the first ask
// has answered.
type reply struct {
	v                string
	err              error
	lost, late, last bool
}

func (s *asks) QueryWorkflow(ctx context.Context, _ *interceptor.ClientQueryWorkflowInput) (converter.EncodedValue, error) {
	s.done.Add(1)
	defer s.done.Done()
	s.mu.Lock()
	n := s.calls
	s.calls++
	if n == 1 {
		close(s.again)
	}
	r := s.script[n]
	s.mu.Unlock()
	if n == 0 {
		defer close(s.first)
	}
	wait := s.again
	switch {
	case r.lost:
		wait = nil
	case r.last:
		wait = s.first
	case !r.late:
		return answer(r.v), r.err
	}
	select {
	case <-wait:
		return answer(r.v), r.err
	case <-ctx.Done():
		s.mu.Lock()
		s.cancelled = append(s.cancelled, n)
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// hedgeBound is how long TestQueryHedge waits for what should come at once (an answer, the
// losing ask's end) before it fails: a broken hedge fails the test rather than hanging it.
const hedgeBound = 5 * time.Second

// TestQueryHedge: a query is asked again only when its answer is late, the first answer
// wins, and the ask that lost is cancelled (by the hedge: the caller's own time is a
// minute).
func TestQueryHedge(t *testing.T) {
	unknown := errors.New("unknown queryType progess")
	// The hedge's delay is an hour where no second ask is wanted, none where it is: what
	// the test shows does not hang on how soon a goroutine runs.
	const never, now = time.Hour, 0
	for _, tt := range []struct {
		name      string
		after     time.Duration
		script    []reply
		want      string
		wantErr   error
		calls     int
		cancelled []int
	}{
		{"answered in time: asked once", never, []reply{{v: "active"}}, "active", nil, 1, nil},
		{"refused in time: asked once", never, []reply{{err: unknown}}, "", unknown, 1, nil},
		{"the first answer lost: the second wins", now, []reply{{lost: true}, {v: "suspended"}}, "suspended", nil, 2, []int{0}},
		{"the first late, the second lost: the first wins", now, []reply{{v: "active", late: true}, {lost: true}}, "active", nil, 2, []int{1}},
		{"the first refused late, the second answered after it: the answer wins", now, []reply{{err: unknown, late: true}, {v: "active", last: true}}, "active", nil, 2, nil},
		{"both lost: the caller's time ends", now, []reply{{lost: true}, {lost: true}}, "", context.DeadlineExceeded, 2, []int{0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &asks{script: tt.script, again: make(chan struct{}), first: make(chan struct{})}
			q := (&queryHedge{after: tt.after}).InterceptClient(s)
			// The caller waits a minute, except where both answers are lost: a losing ask
			// that ends is then ended by the hedge, not by the caller's time.
			deadline := time.Minute
			if errors.Is(tt.wantErr, context.DeadlineExceeded) {
				deadline = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			type result struct {
				v   converter.EncodedValue
				err error
			}
			got := make(chan result, 1)
			go func() {
				v, err := q.QueryWorkflow(ctx, &interceptor.ClientQueryWorkflowInput{WorkflowID: "tau-1", QueryType: "status"})
				got <- result{v, err}
			}()
			var r result
			select {
			case r = <-got:
			case <-time.After(hedgeBound):
				t.Fatalf("no answer within %s: was the query asked again?", hedgeBound)
			}
			if !errors.Is(r.err, tt.wantErr) {
				t.Fatalf("error %v; want %v", r.err, tt.wantErr)
			}
			if r.err == nil {
				var got string
				if err := r.v.Get(&got); err != nil || got != tt.want {
					t.Errorf("answer %q (%v); want %q", got, err, tt.want)
				}
			}
			finished := make(chan struct{})
			go func() { s.done.Wait(); close(finished) }()
			select {
			case <-finished: // every ask has returned: the one that lost was cancelled
			case <-time.After(hedgeBound):
				t.Fatalf("an ask still runs %s after the answer: the one that lost was not cancelled", hedgeBound)
			}
			slices.Sort(s.cancelled)
			if s.calls != tt.calls || !slices.Equal(s.cancelled, tt.cancelled) {
				t.Errorf("asked %d times, cancelled %v; want %d, %v", s.calls, s.cancelled, tt.calls, tt.cancelled)
			}
		})
	}
}
