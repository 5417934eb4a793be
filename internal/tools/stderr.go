package tools

// A stdio server's stderr, read into the worker's log in bounded, printable lines.

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode"
)

// MaxLogLine is the most of one line of a stdio server's stderr the worker logs.
const MaxLogLine = 4096

// logWriter sends a stdio server's stderr to the worker's log, a line at a time. It holds
// at most MaxLogLine bytes: a longer line is logged cut, saying so, and the rest of it
// dropped, so a server that writes megabytes without a newline costs the worker no more.
// Control characters are dropped from what it logs: the log is read on terminals.
type logWriter struct {
	logger *slog.Logger
	mu     sync.Mutex
	buf    []byte
	cut    bool // the line being read was logged cut: the rest of it is dropped
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !w.cut {
			if room := MaxLogLine - len(w.buf); len(part) > room {
				w.buf = append(w.buf, part[:room]...)
				w.log(true)
				w.cut = true
			} else {
				w.buf = append(w.buf, part...)
			}
		}
		if i < 0 {
			break
		}
		if !w.cut {
			w.log(false)
		}
		w.buf, w.cut = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// log logs the line held, if it has anything to show, and empties the buffer.
func (w *logWriter) log(cut bool) {
	line := strings.TrimSpace(printable(string(w.buf)))
	w.buf = w.buf[:0]
	switch {
	case line == "":
	case cut:
		w.logger.Info(line, "cut", fmt.Sprintf("the line goes on past %d bytes; the rest of it is dropped", MaxLogLine))
	default:
		w.logger.Info(line)
	}
}

// printable is s without control and format characters (a terminal's escape sequences,
// carriage returns, bidirectional overrides), a tab as a space and bytes that are not
// UTF-8 as U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
