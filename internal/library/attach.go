package library

import (
	"net/url"
	"path/filepath"
	"strings"
)

// The files an export attaches to a reference: BibTeX's file field (Zotero writes
// "Full Text PDF:files/12/Ito - 2021.pdf:application/pdf", several joined by ";";
// Mendeley and JabRef ":path:PDF", with "\:" for a colon of the path; Better BibTeX the
// bare path) and RIS's L1 and L4 (a path, or a file:// URL). A path relative to the export
// is relative to the export's folder.

// maxAttachments is how many files one reference may attach.
const maxAttachments = 20

// bibFiles reads a BibTeX file field.
func bibFiles(v string) []string {
	var out []string
	for _, item := range splitEscaped(v, ';') {
		parts := splitEscaped(item, ':')
		path := item
		switch {
		case len(parts) >= 3:
			// description:path:type; a Windows path's drive colon is escaped ("C\:").
			path = strings.Join(parts[1:len(parts)-1], ":")
		case len(parts) == 2 && parts[0] == "":
			path = parts[1]
		}
		if p := attachmentPath(unescape(path)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// risFiles reads RIS's attachment lines.
func risFiles(values []string) []string {
	var out []string
	for _, v := range values {
		for _, item := range strings.Split(v, ";") {
			if p := attachmentPath(item); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// attachmentPath is a path of an attached file as written, a file:// URL read as its path;
// "" for what is no local file (an http link).
func attachmentPath(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		s = u.Path
	}
	if s == "" || strings.Contains(s, "://") || strings.ContainsRune(s, 0) {
		return ""
	}
	return filepath.FromSlash(strings.ReplaceAll(s, `\`, `/`)) // a Windows path's separators
}

// splitEscaped splits s at sep, but not at a sep written "\sep".
func splitEscaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unescape drops the backslash of "\:", "\;" and "\\".
func unescape(s string) string {
	return strings.NewReplacer(`\:`, ":", `\;`, ";", `\\`, `\`).Replace(s)
}
