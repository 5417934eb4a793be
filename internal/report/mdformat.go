package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// How the Markdown report writes lists, counts, scores, costs and times.

// bullets writes a list, or the none text if it is empty (nothing if that is empty too).
func bullets(b *bytes.Buffer, items []string, none string) {
	list(b, items, none, func(int) string { return "- " })
}

func numbered(b *bytes.Buffer, items []string, none string) {
	list(b, items, none, func(i int) string { return strconv.Itoa(i+1) + ". " })
}

func list(b *bytes.Buffer, items []string, none string, marker func(int) string) {
	n := 0
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		m := marker(n)
		fmt.Fprintf(b, "%s%s\n", m, indent(it, strings.Repeat(" ", len(m))))
		n++
	}
	switch {
	case n > 0:
		b.WriteString("\n")
	case none != "":
		fmt.Fprintf(b, "%s\n\n", none)
	}
}

// and joins "a", "a and b", "a, b and c".
func and(items []string) string {
	switch len(items) {
	case 0:
		return "–"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// mark prints a 0-10 score to one decimal at most: "7", "6.5".
func mark(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

// count says "1 review" or "3 reviews".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "is") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(noun, "is") + "es" // hypothesis
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func elo(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }

// rating is a record's Elo with its standard error when it has one (fitted ratings).
func rating(e session.Entry) string {
	if e.EloSE > 0 {
		return elo(e.Elo) + " ± " + elo(e.EloSE)
	}
	return elo(e.Elo)
}

// score is the mean review score, or a dash for a hypothesis nobody reviewed: 0.0 would
// read as a verdict.
func score(e session.Entry) string {
	if e.Reviews == 0 {
		return "–"
	}
	return strconv.FormatFloat(e.Score, 'f', 1, 64)
}

// hypothesesCount is how many hypotheses the session holds against its max_hypotheses.
// The scientist's own and those a continued session started with do not count against
// it, so when there are any the count says what counted: a session never reads as over
// its limit when it is not.
func hypothesesCount(v *view) string {
	p := v.snap.Progress
	p.HypothesesGenerated = len(v.snap.Hypotheses)
	counted, added, inherited := p.Counts()
	n := strconv.Itoa(counted)
	if limit := v.snap.Config.MaxHypotheses; limit > 0 {
		n += " of at most " + strconv.Itoa(limit)
	}
	if added+inherited > 0 {
		var parts []string
		if inherited > 0 {
			parts = append(parts, strconv.Itoa(inherited)+" from the parent session")
		}
		parts = append(parts, n+" by the agents")
		if added > 0 {
			parts = append(parts, strconv.Itoa(added)+" added by the scientist")
		}
		n = strconv.Itoa(p.HypothesesGenerated) + " (" + strings.Join(parts, ", ") + ")"
	}
	if x := len(v.excluded); x > 0 {
		n += ", " + strconv.Itoa(x) + " excluded"
	}
	return n
}

// provider is the provider and model, the provider's name shown by show (oneLine, or
// mdText for Markdown).
func provider(c research.Config, show func(string) string) string {
	switch {
	case c.Provider == "":
		return ""
	case c.Model == "":
		return show(c.Provider)
	}
	return show(c.Provider) + ", model " + code(c.Model)
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
	text := fmt.Sprintf("%s tokens (%s prompt, %s completion) in %s requests",
		research.Thousands(u.PromptTokens+u.CompletionTokens), research.Thousands(u.PromptTokens),
		research.Thousands(u.CompletionTokens), research.Thousands(u.Requests))
	if u.CachedTokens > 0 {
		text += fmt.Sprintf("; %s prompt tokens (%d%%) served from the provider's cache", research.Thousands(u.CachedTokens), u.CachedPercent())
	}
	if u.CacheWriteTokens > 0 {
		text += fmt.Sprintf(", %s written to it", research.Thousands(u.CacheWriteTokens))
	}
	if u.Batched > 0 {
		text += fmt.Sprintf("; %s requests through the provider's batch API", research.Thousands(u.Batched))
	}
	if u.CostUSD > 0 {
		text += fmt.Sprintf("; estimated cost $%s (from the worker's price table)", research.Dollars(u.CostUSD))
	}
	if u.Unpriced > 0 {
		text += fmt.Sprintf("; %s requests on a model without a price, whose cost is unknown and not counted", research.Thousands(u.Unpriced))
	}
	return text
}
