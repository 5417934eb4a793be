package main

import (
	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// The data each page's template is executed with: typed, so what a page gives is named
// in one place, and a field a template reads that its page lacks fails the render (and
// the tests that render the page) instead of reading empty as a map's missing key does.

// frame is what the layout reads of every page: who is signed in (from the request when a
// page does not say), the desk's mode, and how many sessions wait (the list's count, in
// the title).
type frame struct {
	Who     auth.Who
	Mode    string
	Waiting int
}

func (f *frame) framed() *frame { return f }

// pageData is a page's data: its own fields and the layout's frame.
type pageData interface{ framed() *frame }

// listPage is the sessions list, with the start form (again with its error, when a
// start was refused).
type listPage struct {
	frame
	Rows          []Row
	Whose, Status string
	Q             string
	States        []string
	Form          startForm
	Reviews       []string
	Safety        []string
	Providers     []string
}

// hypothesisPage is one hypothesis, its citations, its reviews and its entry in the
// ranking (nil when not found).
type hypothesisPage struct {
	frame
	ID      string
	H       research.Hypothesis
	Refs    []report.Source // H's citations, in order, as the report shows them (template "source")
	Reviews []reviewPage
	Entry   *session.Entry
	// Tests are its experiments in the lab (TestsNote says why none could be read);
	// CanSteer offers the form that plans one.
	Tests      []labExperiment
	TestsNote  string
	CanSteer   bool
	Hypothesis string // H's id, for the plan form
}

// reviewPage is a review, with each of its citation checks beside the reference it is of
// (citation.Join: one rule for every page and the report).
type reviewPage struct {
	research.Review
	Cited []citation.Cited
}

// treePage is a session's lineage.
type treePage struct {
	frame
	ID   string
	Root *node
}

// signedOutPage is where a sign-out ends, with where to sign in again.
type signedOutPage struct {
	frame
	SignIn string
}

// errorPage says what went wrong, in the desk's own words, with the request id its log
// has the error under (when it logged one).
type errorPage struct {
	frame
	Title, Message string
	Request        string
}

// sessionPage is a session's page; its live parts are rendered from the same data.
type sessionPage struct {
	frame
	ID               string
	Status           workflows.Status
	State            workflows.StateView
	Line             string
	Record           access.Record
	CanSteer         bool
	Prev, Next       int
	HasPrev, HasNext bool
	Offset           int
	Conversation     ConversationPage
	ConvFirst        int
	ConvLast         int
	ConvPrev         int
	HasConvPrev      bool
	ConvNext         int
	HasConvNext      bool
	ConversationNote string
	Converses        bool
	Verdicts         []string
	Ended            bool
	Trusted          []trusted

	// Only on the whole page, not its live parts.
	Files     []string
	HasReport bool
	CanShare  bool
	Levels    []access.Level
	Events    string
}
