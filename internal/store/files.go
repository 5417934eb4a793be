package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Report artefacts: report.md and the other files a report writes into the session
// (report.json, elo.svg, ...), each replaced by a later version.

// PutReport writes the session's Markdown report, replacing any earlier one, and returns
// where it is (see Where).
func (s *Store) PutReport(ctx context.Context, sessionID string, markdown []byte) (where string, err error) {
	if _, err := escape("session id", sessionID); err != nil {
		return "", err
	}
	if err := s.b.Put(ctx, sessionID, reportFile, markdown, false); err != nil {
		return "", err
	}
	return s.b.Where(sessionID, reportFile), nil
}

// Report returns the session's Markdown report. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Report(ctx context.Context, sessionID string) ([]byte, error) {
	return s.File(ctx, sessionID, reportFile)
}

// reservedNames are the names of the store's own records in a session, which a report
// artefact must not replace.
var reservedNames = []string{
	hypothesesDir, reviewsDir, turnsDir, piecesDir, checkpointsDir, eventsFile, indexFile,
	planFile, debatesDir, metaReviewsDir, overviewFile, ArchiveFile, AccessFile,
}

// checkFileName refuses a report artefact's name that is not a plain file name of its own.
func checkFileName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("store: file name %q is not a file name; give one such as report.json", name)
	case strings.ContainsAny(name, `/\`+"\x00"):
		return fmt.Errorf("store: file name %q holds a path separator; give a plain file name such as report.json", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("store: file name %q starts with a dot; report files are not hidden", name)
	case len(name) > maxName:
		return fmt.Errorf("store: file name %.40q... is %d bytes; at most %d", name, len(name), maxName)
	case slices.Contains(reservedNames, name):
		return fmt.Errorf("store: %q is the store's own record; choose another name for a report file", name)
	}
	return nil
}

// PutFile writes a report artefact (report.json, elo.svg, ...) into the session, replacing
// any earlier version, and returns where it is (see Where). name must be a plain file
// name: no directory, not hidden, and not one of the store's own records.
func (s *Store) PutFile(ctx context.Context, sessionID, name string, data []byte) (where string, err error) {
	if err := checkFileName(name); err != nil {
		return "", err
	}
	if _, err := escape("session id", sessionID); err != nil {
		return "", err
	}
	if err := s.b.Put(ctx, sessionID, name, data, false); err != nil {
		return "", err
	}
	return s.b.Where(sessionID, name), nil
}

// File returns a report artefact written by PutFile (or the report). If there is none, the
// error wraps fs.ErrNotExist.
func (s *Store) File(ctx context.Context, sessionID, name string) ([]byte, error) {
	if name != reportFile {
		if err := checkFileName(name); err != nil {
			return nil, err
		}
	}
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	b, err := s.b.Get(ctx, sessionID, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: session %q has no %s in %s: %w", sessionID, name, s.location, errNoRecord)
	}
	return b, err
}
