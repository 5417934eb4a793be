// Command literature is an MCP server over a lab's own library of references: the
// BibTeX, RIS and CSL-JSON files a reference manager (Zotero, Mendeley, JabRef, EndNote)
// exports, in a folder or one file, and the full texts they attach (PDFs, JATS XML as
// PubMed Central gives it, HTML: through the exports' file fields, beside them named by
// citation key or DOI, or in --fulltext folders). It offers two tools:
//
//   - search: ranked full-text search over titles, abstracts, authors and keywords, with
//     the passage of each abstract that best matches the query, and the best passages
//     of the full texts, each with its page and section;
//   - fetch: the whole reference, by its id (its DOI, else its citation key); a page or a
//     section of its full text; or one passage, by its id (10.5555/x#p7.2).
//
// It speaks MCP over stdio (the default: a worker starts it as a child process) or over
// streamable HTTP at /mcp (--http ADDR). Its index lives on disk (--index, by default in
// the user's cache directory) and follows the folder: files added, changed or removed are
// read again every --watch interval. It answers once the references are indexed: the full
// texts new or changed since its last run are read while it answers (a search says how
// many are still being read; stderr says when they are all indexed). Everything it
// skipped, and why, goes to stderr: an
// export or full-text file over --max-file-mb (64 MiB) is not read, BibTeX macros, fields
// and name lists are read within caps (library.Limits), and each full text is read within
// --fulltext-timeout and, for a PDF (Debian's pdftotext, a child process),
// --fulltext-memory-mb; an encrypted, corrupt or scanned one is named and skipped.
//
//	go run ./literature --library ~/Zotero/export
//	go run ./literature --library refs.bib --http 127.0.0.1:8765
//
// Over HTTP it answers only to the host names of its address (--allowed-host for more),
// refuses browser origins it is not told of (--allowed-origin), and with
// COSCI_LITERATURE_TOKEN_FILE (or COSCI_LITERATURE_TOKEN) set wants every request to carry
// Authorization: Bearer <token>; on an address other machines reach, the token is required.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/library"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "literature:", err)
		os.Exit(1)
	}
}

func run() error {
	libPath := flag.String("library", os.Getenv("COSCI_LIBRARY"), "a folder of .bib, .ris and .json (CSL-JSON) exports, or one such file (env COSCI_LIBRARY)")
	indexDir := flag.String("index", "", "where the index lives (default: a directory of the user's cache for this library)")
	var hosts, origins repeated
	flag.Var(&hosts, "allowed-host", "with --http: a host name clients reach the server by, besides the --http host (and localhost, 127.0.0.1, ::1 on loopback), e.g. behind a proxy; repeat for several; other Host headers are refused")
	flag.Var(&origins, "allowed-origin", "with --http: a browser origin (scheme://host:port) whose pages may call the server; repeat for several; other origins are refused")
	httpAddr := flag.String("http", "", "serve streamable HTTP at ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765")
	every := flag.Duration("watch", 2*time.Second, "how often to look for changed files (0: never)")
	maxFileMB := flag.Int("max-file-mb", int(library.DefaultLimits().FileBytes>>20), "the largest export or full-text file read, in MiB; a larger one is skipped, named on stderr")
	var texts repeated
	flag.Var(&texts, "fulltext", "a folder of full texts (PDF, JATS XML, HTML), each file or its folder named by its reference's citation key or DOI (10.5555_x.pdf); repeat for several")
	textTimeout := flag.Duration("fulltext-timeout", fulltext.DefaultLimits().Timeout, "how long reading one full text may take; a slower one is skipped, named on stderr")
	textMemoryMB := flag.Int("fulltext-memory-mb", int(fulltext.DefaultLimits().MemoryBytes>>20), "the memory (address space) the PDF extractor may take for one file, in MiB")
	flag.Parse()
	// Logs go to stderr: on stdio, stdout is the protocol's.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if *libPath == "" {
		return errors.New("name the library: --library FOLDER (or a .bib, .ris or .json file)")
	}
	if *maxFileMB < 1 {
		return fmt.Errorf("--max-file-mb %d: give 1 MiB or more", *maxFileMB)
	}
	if *textTimeout <= 0 || *textMemoryMB < 64 {
		return fmt.Errorf("--fulltext-timeout %s, --fulltext-memory-mb %d: give a time over 0 and 64 MiB or more", *textTimeout, *textMemoryMB)
	}
	if *indexDir == "" {
		dir, err := library.DefaultIndexDir(*libPath)
		if err != nil {
			return err
		}
		*indexDir = dir
	}
	// The address and the token are checked before the library is read, so that a library
	// open to the network without a token is refused at once.
	web, err := listenHTTP(*httpAddr, hosts, origins)
	if err != nil {
		return err
	}
	t0 := time.Now()
	// The server answers once the references are indexed; the full texts new or changed
	// since the last run are read in the background (a search says how many are still
	// being read), and the log says when they are, and what was skipped.
	textsRead := make(chan textsDone, 1)
	lib, err := library.OpenWith(*libPath, *indexDir, logger, library.Options{Texts: texts, Limits: library.Limits{
		FileBytes: int64(*maxFileMB) << 20, TextTimeout: *textTimeout, TextMemory: int64(*textMemoryMB) << 20},
		Background: true, OnTexts: func(ch library.Changes, err error) { textsRead <- textsDone{ch, err} }})
	if err != nil {
		return err
	}
	defer lib.Close()
	reported := report(logger, lib.Skipped(), nil)
	reading, _ := lib.Reading()
	logger.Info("library ready", "references", lib.Len(), "full texts", lib.Texts(), "full texts still being read", reading,
		"library", *libPath, "index", *indexDir, "took", time.Since(t0).Round(time.Millisecond))
	go logTextsRead(logger, lib, textsRead, reported, t0)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *every > 0 {
		go lib.Watch(ctx, *every, logChanges(logger))
	}
	server := library.Server(lib)
	if *httpAddr == "" {
		err := server.Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	srv := web.server(server)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	logger.Info("serving MCP over streamable HTTP", web.logAttrs()...)
	if err := srv.Serve(web.l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logTextsRead logs the end of the first reading of the full texts, once it comes: how
// many were read and indexed, and those skipped that were not reported already.
func logTextsRead(logger *slog.Logger, lib *library.Library, textsRead <-chan textsDone, reported map[string]bool, t0 time.Time) {
	d := <-textsRead
	if errors.Is(d.err, context.Canceled) {
		return // the server stops
	}
	if d.err != nil {
		logger.Error("reading the full texts failed", "error", d.err)
	}
	skipped := 0
	for s := range report(logger, d.ch.Skipped, reported) {
		if !reported[s] {
			skipped++
		}
	}
	logger.Info("full texts indexed", "full texts", lib.Texts(), "read", len(d.ch.Texts), "indexed", d.ch.TextsIndexed, "skipped", skipped,
		"took", time.Since(t0).Round(time.Millisecond))
}

// logChanges is what the library's watch calls with each refresh: it logs what changed,
// and what was skipped.
func logChanges(logger *slog.Logger) func(library.Changes, error) {
	return func(ch library.Changes, err error) {
		if err != nil {
			logger.Error("refresh failed", "error", err)
			return
		}
		logger.Info("library changed", "files", ch.Files, "added", ch.Added, "updated", ch.Updated, "removed", ch.Removed, "references", ch.References,
			"full texts read", len(ch.Texts), "indexed", ch.TextsIndexed, "dropped", ch.TextsRemoved)
		report(logger, ch.Skipped, nil)
	}
}

// textsDone is the end of the first reading of the full texts.
type textsDone struct {
	ch  library.Changes
	err error
}

// report logs what was skipped, and why, but for what was reported already (done), and
// returns all it has reported.
func report(logger *slog.Logger, skipped []library.Skipped, done map[string]bool) map[string]bool {
	all := map[string]bool{}
	for _, s := range skipped {
		if !done[s.String()] {
			logger.Warn("skipped", "what", s.String())
		}
		all[s.String()] = true
	}
	return all
}
