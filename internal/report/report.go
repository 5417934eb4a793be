// Package report renders a research session as a Markdown report for the scientist: what
// was asked, how the goal changed, and the hypotheses in the order the tournament ranked
// them, with their reviews.
//
// The report is a pure function of its inputs. It iterates only over slices, never over
// maps, so the same session always renders to the same bytes.
package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Detailed is how many of the top-ranked hypotheses get a section of their own; the rest
// appear in the ranking table only, so a long session still yields a readable report.
const Detailed = 10

// missing stands in for a text the store does not hold.
const missing = "(text not in store)"

// titleLength bounds the goal in the report's title, in characters.
const titleLength = 100

// Markdown renders the session's report from its final snapshot and the texts from the
// store: hyps by hypothesis id, reviews by hypothesis id. Texts absent from either map
// render as a placeholder rather than failing, so a report can always be written.
//
// It never prints a hypothesis's Latent quality: that is the simulator's hidden truth,
// and showing it would leak the answer the tournament is meant to find.
func Markdown(snap session.Snapshot, hyps map[string]research.Hypothesis, reviews map[string][]research.Review) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# Research report: %s\n\n", shorten(snap.Goal, titleLength))

	summary(&b, snap)

	w("## Research goal\n\n")
	if len(snap.Refinements) > 0 {
		w("As last refined by the scientist:\n\n")
	}
	w("%s\n\n", quote(snap.Goal))

	if len(snap.Refinements) > 0 {
		w("### Refinements\n\n")
		w("In the order the scientist made them.\n\n")
		for i, r := range snap.Refinements {
			w("%d. %s\n", i+1, orDash(oneLine(r.Time)))
			if r.Goal != "" {
				w("   - New goal: %s\n", indent(r.Goal, "     "))
			}
			if r.Focus != "" {
				w("   - Focus: %s\n", indent(r.Focus, "     "))
			}
		}
		w("\n")
	}

	w("## Ranked hypotheses\n\n")
	if len(snap.Hypotheses) == 0 {
		w("The session produced no hypotheses.\n")
		return end(b.Bytes())
	}
	w("Ranked by Elo rating from the tournament; W-L counts matches won and lost.\n\n")
	w("| Rank | ID | Title | Elo | W-L | Review score |\n")
	w("|---:|---|---|---:|---:|---:|\n")
	for i, e := range snap.Hypotheses {
		w("| %d | %s | %s | %s | %d-%d | %s |\n",
			i+1, cell(e.ID), cell(title(e, hyps)), elo(e.Elo), e.Wins, e.Losses, score(e))
	}
	w("\n")
	if n := len(snap.Hypotheses); n > Detailed {
		rest := "the other " + strconv.Itoa(n-Detailed) + " appear"
		if n-Detailed == 1 {
			rest = "the other one appears"
		}
		w("The top %d follow in detail; %s in the table only.\n\n", Detailed, rest)
	}

	for i, e := range snap.Hypotheses {
		if i == Detailed {
			break
		}
		hypothesis(&b, i+1, e, hyps, reviews[e.ID])
	}
	return end(b.Bytes())
}

// end leaves exactly one newline at the end of the report.
func end(md []byte) []byte { return append(bytes.TrimRight(md, "\n"), '\n') }

// summary writes the facts a reader wants before the science: who, when, how far.
func summary(b *bytes.Buffer, snap session.Snapshot) {
	p := snap.Progress
	items := []struct{ name, value string }{
		{"Session", code(snap.SessionID)},
		{"Scientist", oneLine(snap.ScientistID)},
		{"State", string(snap.State)},
		{"Stop reason", oneLine(snap.StopReason)},
		{"Started", oneLine(snap.StartedAt)},
		{"Elapsed", elapsed(snap)},
		{"Provider", provider(snap.Config)},
		{"Hypotheses", hypothesesCount(snap)},
		{"Reviews", strconv.Itoa(p.ReviewsCompleted)},
		{"Matches", strconv.Itoa(p.MatchesPlayed)},
		{"Checkpoints", strconv.Itoa(p.Checkpoints)},
		{"Usage", usage(snap.Usage)},
	}
	for _, it := range items {
		fmt.Fprintf(b, "- **%s:** %s\n", it.name, orDash(it.value))
	}
	b.WriteString("\n")
}

// hypothesis writes the section of one ranked hypothesis.
func hypothesis(b *bytes.Buffer, rank int, e session.Entry, hyps map[string]research.Hypothesis, reviews []research.Review) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	h, ok := hyps[e.ID]

	w("### %d. %s\n\n", rank, oneLine(title(e, hyps)))
	w("- **ID:** %s\n", code(e.ID))
	w("- **Elo:** %s (%d won, %d lost)\n", elo(e.Elo), e.Wins, e.Losses)
	origin := oneLine(h.Origin)
	if origin == "" {
		origin = oneLine(e.Origin)
	}
	if h.Strategy != "" {
		origin += ", strategy " + oneLine(h.Strategy)
	}
	w("- **Origin:** %s\n", orDash(origin))
	w("- **Review score:** %s from %s\n\n", score(e), count(e.Reviews, "review"))

	if !ok {
		w("%s\n\n", missing)
	} else {
		w("**Statement.** %s\n\n", orText(h.Statement))
		w("**Rationale.** %s\n\n", orText(h.Rationale))
		w("**Testable predictions:**\n\n")
		if len(h.Predictions) == 0 {
			w("None given.\n\n")
		}
		for i, p := range h.Predictions {
			marker := strconv.Itoa(i+1) + ". "
			w("%s%s\n", marker, indent(p, strings.Repeat(" ", len(marker))))
		}
		if len(h.Predictions) > 0 {
			w("\n")
		}
	}

	w("**Reviews:**")
	if len(reviews) == 0 {
		w(" none yet.\n\n")
		return
	}
	w("\n\n")
	for i, r := range reviews {
		if i > 0 {
			w("\n")
		}
		s := r.Scores
		w("- *%s*: %s, overall %s/10 (novelty %s, plausibility %s, testability %s, safety %s)\n",
			orDash(oneLine(r.Type)), orDash(oneLine(r.Verdict)), mark(s.Overall()),
			mark(s.Novelty), mark(s.Plausibility), mark(s.Testability), mark(s.Safety))
		if strings.TrimSpace(r.Critique) != "" {
			w("\n  %s\n", indent(r.Critique, "  "))
		}
	}
	w("\n")
}

// mark prints a 0-10 score to one decimal at most: "7", "6.5".
func mark(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

// count says "1 review" or "3 reviews".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// title prefers the stored text's title and falls back on the snapshot's copy.
func title(e session.Entry, hyps map[string]research.Hypothesis) string {
	if h, ok := hyps[e.ID]; ok && h.Title != "" {
		return h.Title
	}
	if e.Title != "" {
		return e.Title
	}
	return missing
}

func elo(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }

// score is the mean review score, or a dash for a hypothesis nobody reviewed: 0.0 would
// read as a verdict.
func score(e session.Entry) string {
	if e.Reviews == 0 {
		return "–"
	}
	return strconv.FormatFloat(e.Score, 'f', 1, 64)
}

func hypothesesCount(snap session.Snapshot) string {
	n := strconv.Itoa(len(snap.Hypotheses))
	if limit := snap.Config.MaxHypotheses; limit > 0 {
		n += " of at most " + strconv.Itoa(limit)
	}
	return n
}

func provider(c research.Config) string {
	switch {
	case c.Provider == "":
		return ""
	case c.Model == "":
		return oneLine(c.Provider)
	}
	return oneLine(c.Provider) + ", model " + code(c.Model)
}

// elapsed is the progress report's own figure, or, for a snapshot without one, the time
// from start to snapshot.
func elapsed(snap session.Snapshot) string {
	if snap.Progress.Elapsed != "" {
		return oneLine(snap.Progress.Elapsed)
	}
	start, err1 := time.Parse(time.RFC3339Nano, snap.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, snap.Time)
	if err1 != nil || err2 != nil || end.Before(start) {
		return ""
	}
	return end.Sub(start).Round(time.Second).String()
}

func usage(u research.Usage) string {
	return fmt.Sprintf("%s tokens (%s prompt, %s completion) in %s requests",
		thousands(u.PromptTokens+u.CompletionTokens), thousands(u.PromptTokens),
		thousands(u.CompletionTokens), thousands(u.Requests))
}

// thousands groups digits in threes, because token counts run to millions.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// oneLine collapses all whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shorten makes s one line of at most n characters, cutting at a word if it can.
func shorten(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := []rune(s)[:n-1]
	if i := strings.LastIndexByte(string(cut), ' '); i > n/2 {
		return strings.TrimRight(string(cut)[:i], " ,;:") + "…"
	}
	return string(cut) + "…"
}

// cell makes s safe inside a table cell: a newline would end the row and a "|" would end
// the cell. Backslashes are doubled first so that an "\" in the text cannot combine with
// the escape of a following "|".
func cell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

// code renders s as an inline code span, with a fence longer than any run of backticks
// in s, so ids print verbatim whatever they hold.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " " // CommonMark strips one space each side
	}
	return fence + s + fence
}

// quote renders text as a block quote, keeping its line breaks.
func quote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "> –"
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// indent keeps a multi-line text inside the list item it starts in.
func indent(s, prefix string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orText(s string) string {
	if strings.TrimSpace(s) == "" {
		return missing
	}
	return strings.TrimSpace(s)
}
