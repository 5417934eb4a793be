// Command literature is an MCP server over a lab's own library of references: the
// BibTeX, RIS and CSL-JSON files a reference manager (Zotero, Mendeley, JabRef, EndNote)
// exports, in a folder or one file. It offers two tools:
//
//   - search: ranked full-text search over titles, abstracts, authors and keywords, with
//     the passage of each abstract that best matches the query;
//   - fetch: the whole reference, by its id (its DOI, else its citation key).
//
// It speaks MCP over stdio (the default: a worker starts it as a child process) or over
// streamable HTTP at /mcp (--http ADDR). Its index lives on disk (--index, by default in
// the user's cache directory) and follows the folder: files added, changed or removed are
// read again every --watch interval. Everything it skipped, and why, goes to stderr: an
// export file over --max-file-mb (64 MiB) is not read, and BibTeX macros, fields and
// name lists are read within caps (library.Limits).
//
//	go run ./literature --library ~/Zotero/export
//	go run ./literature --library refs.bib --http 127.0.0.1:8765
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
	httpAddr := flag.String("http", "", "serve streamable HTTP at ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765")
	every := flag.Duration("watch", 2*time.Second, "how often to look for changed files (0: never)")
	maxFileMB := flag.Int("max-file-mb", int(library.DefaultLimits().FileBytes>>20), "the largest export file read, in MiB; a larger one is skipped, named on stderr")
	flag.Parse()
	// Logs go to stderr: on stdio, stdout is the protocol's.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if *libPath == "" {
		return errors.New("name the library: --library FOLDER (or a .bib, .ris or .json file)")
	}
	if *maxFileMB < 1 {
		return fmt.Errorf("--max-file-mb %d: give 1 MiB or more", *maxFileMB)
	}
	if *indexDir == "" {
		dir, err := library.DefaultIndexDir(*libPath)
		if err != nil {
			return err
		}
		*indexDir = dir
	}
	t0 := time.Now()
	lib, err := library.OpenWithLimits(*libPath, *indexDir, logger, library.Limits{FileBytes: int64(*maxFileMB) << 20})
	if err != nil {
		return err
	}
	defer lib.Close()
	report(logger, lib.Skipped())
	logger.Info("library ready", "references", lib.Len(), "library", *libPath, "index", *indexDir, "took", time.Since(t0).Round(time.Millisecond))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *every > 0 {
		go lib.Watch(ctx, *every, func(ch library.Changes, err error) {
			if err != nil {
				logger.Error("refresh failed", "error", err)
				return
			}
			logger.Info("library changed", "files", ch.Files, "added", ch.Added, "updated", ch.Updated, "removed", ch.Removed, "references", ch.References)
			report(logger, ch.Skipped)
		})
	}
	server := library.Server(lib)
	if *httpAddr == "" {
		err := server.Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	srv := &http.Server{Addr: *httpAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+*httpAddr+"/mcp")
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// report logs what was skipped, and why.
func report(logger *slog.Logger, skipped []library.Skipped) {
	for _, s := range skipped {
		logger.Warn("skipped", "what", s.String())
	}
}
