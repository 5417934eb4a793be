package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cosci-dev/cosci/internal/sandbox"
)

// DuckDB's messages name files and directories of the machine (the home directory's
// .duckdb/extensions, the temp directory): they are mapped to reasons, and only where a
// model needs DuckDB's words to mend its query (a parse or binder error: which column is
// missing) is a scrubbed first line passed on, paths and quoted paths cut out.

// childRefusal is a refusal decided here, already in the sandbox's terms.
type childRefusal struct{ r sandbox.Refusal }

func (e *childRefusal) Error() string { return e.r.Detail }

func refusal(reason sandbox.Reason, detail string) error {
	return &childRefusal{sandbox.Refusal{Reason: reason, Layer: sandbox.LayerDuckDB, Detail: detail}}
}

func inputError(format string, args ...any) error {
	return refusal(sandbox.ReasonInput, fmt.Sprintf(format, args...))
}

// loadError is an input DuckDB could not read.
type loadError struct {
	table string
	err   error
}

func (e *loadError) Error() string { return e.err.Error() }

func failed(reason sandbox.Reason, detail string) sandbox.ChildResponse {
	return sandbox.ChildResponse{Error: &sandbox.Refusal{Reason: reason, Layer: sandbox.LayerDuckDB, Detail: detail}}
}

// refused maps an error to the response's refusal.
func refused(err error, dir string) sandbox.ChildResponse {
	var cr *childRefusal
	if errors.As(err, &cr) {
		r := cr.r
		return sandbox.ChildResponse{Error: &r}
	}
	var sr *sandbox.Refusal // a cap the feed keeps (internal/sandbox/feed.go)
	if errors.As(err, &sr) {
		r := *sr
		return sandbox.ChildResponse{Error: &r}
	}
	var le *loadError
	if errors.As(err, &le) {
		if r := classify(le.err, dir); r.Reason == sandbox.ReasonTime || r.Reason == sandbox.ReasonMemory {
			r.Detail = fmt.Sprintf("loading the input %q: %s", le.table, r.Detail)
			return sandbox.ChildResponse{Error: &r}
		}
		return failed(sandbox.ReasonInput, fmt.Sprintf("the input %q could not be loaded (%s)", le.table, scrub(le.err.Error(), dir)))
	}
	r := classify(err, dir)
	return sandbox.ChildResponse{Error: &r}
}

// classify gives a DuckDB error its reason and a detail of our own.
func classify(err error, dir string) sandbox.Refusal {
	cap := func(reason sandbox.Reason, detail string) sandbox.Refusal {
		return sandbox.Refusal{Reason: reason, Layer: sandbox.LayerCap, Detail: detail}
	}
	duck := func(reason sandbox.Reason, detail string) sandbox.Refusal {
		return sandbox.Refusal{Reason: reason, Layer: sandbox.LayerDuckDB, Detail: detail}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return cap(sandbox.ReasonTime, "interrupted at the time cap")
	}
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return duck(sandbox.ReasonQuery, "the query failed: "+scrub(err.Error(), dir))
	}
	msg := strings.ToLower(de.Msg)
	switch {
	case de.Type == duckdb.ErrorTypeInterrupt:
		return cap(sandbox.ReasonTime, "interrupted at the time cap")
	case de.Type == duckdb.ErrorTypeOutOfMemory || strings.Contains(msg, "max_temp_directory_size") || strings.Contains(msg, "out of memory"):
		return cap(sandbox.ReasonMemory, "over the memory cap (memory_limit, then the spill cap max_temp_directory_size)")
	case (de.Type == duckdb.ErrorTypePermission || strings.Contains(msg, "disabled by configuration")) && strings.Contains(msg, "extension"):
		return duck(sandbox.ReasonExtension, "no extension may be installed or loaded in the sandbox")
	case de.Type == duckdb.ErrorTypePermission || strings.Contains(msg, "disabled by configuration"):
		return duck(sandbox.ReasonFile, "file system access is off in the sandbox: only the loaded tables may be read")
	case strings.Contains(msg, "configuration has been locked") || de.Type == duckdb.ErrorTypeSettings:
		return duck(sandbox.ReasonSetting, "the configuration is locked in the sandbox: no setting may change")
	case de.Type == duckdb.ErrorTypeParser || de.Type == duckdb.ErrorTypeSyntax:
		return duck(sandbox.ReasonParse, "DuckDB cannot parse the query: "+scrubParse(de.Msg))
	case de.Type == duckdb.ErrorTypeMissingExtension || de.Type == duckdb.ErrorTypeAutoLoad || de.Type == duckdb.ErrorTypeHTTP || de.Type == duckdb.ErrorTypeNetwork:
		return duck(sandbox.ReasonExtension, "the query needs an extension, and none may be loaded in the sandbox")
	}
	return duck(sandbox.ReasonQuery, "DuckDB could not run the query: "+scrub(de.Msg, dir))
}

var (
	quotedPath = regexp.MustCompile(`"[^"]*[/\\][^"]*"|'[^']*[/\\][^']*'`)
	barePath   = regexp.MustCompile(`(?:~|\.{0,2})/[^\s"']*`)
)

// scrub is the first line of a DuckDB message, at most 200 bytes, with every path cut out
// (quoted or bare, and the run's directory and the home directory wherever they stand).
func scrub(msg, dir string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	for _, p := range []string{dir, os.Getenv("HOME")} {
		if len(p) > 1 {
			line = strings.ReplaceAll(line, p, "…")
		}
	}
	line = quotedPath.ReplaceAllString(line, "(a path)")
	line = barePath.ReplaceAllString(line, "(a path)")
	if len(line) > 200 {
		line = strings.ToValidUTF8(line[:200], "") + "…"
	}
	return line
}

// scrubParse is a parse error's first line without its "Parser Error: " prefix.
func scrubParse(msg string) string {
	s := scrub(msg, "")
	s = strings.TrimPrefix(s, "Parser Error: ")
	return s
}
