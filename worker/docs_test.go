package main

// The documentation's worker command lines are checked against the worker's own flag
// parser (parseFlags), every flag of the worker must be documented, and so must every
// COSCI_* environment variable cosci reads. starter/docs_test.go checks the starter's
// command lines the same way, with the same extraction, below.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsWorkerCommandLines parses every worker command line of the README's and
// docs/*.md's code blocks with parseFlags, with the environment the line gives it.
func TestDocsWorkerCommandLines(t *testing.T) {
	lines := docCommandLines(t, docFiles(t), "worker", "cosci-worker", "worker")
	if len(lines) < 8 {
		t.Fatalf("found only %d worker command lines in the docs; does the extraction still work?", len(lines))
	}
	t.Logf("%d worker command lines", len(lines))
	for _, l := range lines {
		var err error
		docStderr(t, func() { _, err = parseFlags(l.args, func(k string) string { return l.env[k] }) }) // the usage the flag package prints
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %s\n\tdoes not parse: %v", l.where, l.text, err)
		}
	}
}

// TestDocsNameEveryWorkerFlag: every flag parseFlags defines appears in the README or a
// docs/*.md file (docs/operating.md included).
func TestDocsNameEveryWorkerFlag(t *testing.T) {
	docs := docAll(t)
	usage := docStderr(t, func() {
		if _, err := parseFlags([]string{"-h"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("parseFlags(-h) = %v, want flag.ErrHelp", err)
		}
	})
	flags := regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(usage, -1)
	if len(flags) < 10 {
		t.Fatalf("found %d flags in the worker's usage; does it still print them?\n%s", len(flags), usage)
	}
	for _, f := range flags {
		if !docMentions(docs, "--"+f[1]) {
			t.Errorf("no doc mentions the worker's flag --%s: document it in docs/commands.md (or docs/operating.md)", f[1])
		}
	}
}

// TestDocsNameEveryEnvironmentVariable: every COSCI_* variable that cosci's code or
// scripts name appears in the README or a docs/*.md file.
func TestDocsNameEveryEnvironmentVariable(t *testing.T) {
	docs := docAll(t)
	name := regexp.MustCompile(`\bCOSCI_[A-Z0-9_]*[A-Z0-9]\b`)
	found := map[string]string{} // variable -> a file that names it
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		code := strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")
		script := strings.HasSuffix(p, ".sh") || d.Name() == "Makefile"
		if !code && !script {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range name.FindAllString(string(b), -1) {
			found[v] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found["COSCI_STORE"] == "" {
		t.Fatalf("found no COSCI_STORE in the code; does the walk still see it? found %v", found)
	}
	for _, v := range slices.Sorted(maps.Keys(found)) {
		if !docMentions(docs, v) {
			t.Errorf("no doc mentions %s (named in %s): document it in docs/commands.md (or docs/operating.md)", v, found[v])
		}
	}
}

// TestDocsCheckCatchesAMistake: a misspelled flag fails the check, and an environment
// prefix reaches parseFlags.
func TestDocsCheckCatchesAMistake(t *testing.T) {
	doc := "```sh\nexport COSCI_TOOLS=tools.yaml\nCOSCI_STORE=/tmp/s bin/cosci-worker --slots 2 \\\n  --offline-latency 1s\ngo run ./worker --slot 2\n```\n"
	lines := docCommandLines(t, map[string]string{"doc.md": doc}, "worker", "cosci-worker", "worker")
	if len(lines) != 2 {
		t.Fatalf("found %d command lines, want 2: %+v", len(lines), lines)
	}
	c, err := parseFlags(lines[0].args, func(k string) string { return lines[0].env[k] })
	if err != nil || c.store != "/tmp/s" || c.tools != "tools.yaml" || c.slots != 2 || c.offline.Latency.String() != "1s" {
		t.Errorf("first line: %+v, %v", c, err)
	}
	docStderr(t, func() { _, err = parseFlags(lines[1].args, func(string) string { return "" }) })
	if err == nil {
		t.Error("--slot was accepted")
	}
}

// docAll is the README and docs/*.md in one text.
func docAll(t *testing.T) string {
	var all strings.Builder
	for _, text := range docFiles(t) {
		all.WriteString(text)
	}
	return all.String()
}

// docStderr runs f and returns what it wrote to os.Stderr (where the flag package writes).
func docStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	defer func() { r.Close() }()
	f()
	os.Stderr = old
	w.Close()
	return string(<-done)
}

// TestDocsExtractionIsShared: the extraction below is the starter's, word for word (a test
// package cannot import another's, and the two programs' parsers live in package main).
func TestDocsExtractionIsShared(t *testing.T) {
	region := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i, j := strings.Index(s, "\n"+docRegionStart), strings.Index(s, "\n"+docRegionEnd)
		if i < 0 || j < i {
			t.Fatalf("%s has no shared region", file)
		}
		return s[i:j]
	}
	if region("docs_test.go") != region(filepath.Join("..", "starter", "docs_test.go")) {
		t.Error("worker/docs_test.go and starter/docs_test.go extract the docs' command lines differently: copy one region over the other")
	}
}

const (
	docRegionStart = "// ---- the docs' command lines"
	docRegionEnd   = "// ---- end of the docs' command lines ----"
)

// ---- the docs' command lines (the same in starter/docs_test.go and worker/docs_test.go) ----

// docPlaceholders are the placeholders the docs may use in a command line, and the value
// the check gives each.
var docPlaceholders = map[string]string{
	"session-id":    "tau-1",
	"schedule-id":   "review-1a2b3c4d",
	"call-id":       "call-3",
	"hypothesis-id": "h-0003",
	"checkpoint":    "2",
}

// docLine is one command line of a doc's code block that runs the program checked.
type docLine struct {
	where string            // file:line
	text  string            // the words as read, for messages
	env   map[string]string // NAME=value before the program, over the block's exports
	args  []string          // the program's arguments, placeholders filled in
}

// docFiles reads README.md and docs/*.md, by name.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	docs := map[string]string{}
	for _, name := range append(names, filepath.Join("..", "README.md")) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.ToSlash(strings.TrimPrefix(name, ".."+string(filepath.Separator)))] = string(b)
	}
	return docs
}

// docMentions reports whether text holds phrase as words of its own: "--limit" is not
// mentioned by "--limit-x", nor "starter state" by "starter statex".
func docMentions(text, phrase string) bool {
	return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(phrase) + `([^\w-]|$)`).MatchString(text)
}

// docCommandLines returns the command lines of the docs' fenced code blocks that run the
// program whose binary is called name (bin/name, name, ./bin/name) or that is run from
// the module's directory dir (go run ./dir). A block is read as a shell reads it: line
// continuations, quotes, comments, `;`, `&&`, `|` and `&` between commands, redirections,
// here-documents, `export NAME=value` and NAME=value before a command. Diagram lines (those
// with box-drawing characters or arrows) are not commands. A placeholder such as
// <session-id> is replaced by a plausible value (docPlaceholders); one the check does not
// know is an error.
func docCommandLines(t *testing.T, docs map[string]string, dir string, names ...string) []docLine {
	t.Helper()
	var out []docLine
	for _, file := range slices.Sorted(maps.Keys(docs)) {
		for _, b := range docBlocks(docs[file]) {
			env := map[string]string{}
			for _, c := range docShell(b.text, b.line) {
				words := c.words
				if words[0] == "export" {
					for _, w := range words[1:] {
						if k, v, ok := docAssignment(w); ok {
							env[k] = v
						}
					}
					continue
				}
				cmdEnv := maps.Clone(env)
				for len(words) > 0 {
					k, v, ok := docAssignment(words[0])
					if !ok {
						break
					}
					cmdEnv[k] = v
					words = words[1:]
				}
				args, ok := docProgramArgs(words, dir, names)
				if !ok {
					continue
				}
				l := docLine{where: fmt.Sprintf("%s:%d", file, c.line), text: strings.Join(words, " "), env: cmdEnv}
				for _, a := range args {
					v, err := docSubstitute(a)
					if err != nil {
						t.Errorf("%s: %s: %v", l.where, l.text, err)
					}
					l.args = append(l.args, v)
				}
				out = append(out, l)
			}
		}
	}
	return out
}

var (
	docPlaceholder   = regexp.MustCompile(`<([a-z][a-z0-9-]*)>`)
	docPlaceholderAt = regexp.MustCompile(`^<[a-z][a-z0-9-]*>`)
)

// docSubstitute fills in the placeholders of a word.
func docSubstitute(word string) (string, error) {
	var err error
	v := docPlaceholder.ReplaceAllStringFunc(word, func(p string) string {
		name := p[1 : len(p)-1]
		if v, ok := docPlaceholders[name]; ok {
			return v
		}
		err = fmt.Errorf("unknown placeholder %s: use one of %v, or add it to docPlaceholders", p, slices.Sorted(maps.Keys(docPlaceholders)))
		return p
	})
	return v, err
}

// docAssignment reads NAME=value.
func docAssignment(w string) (string, string, bool) {
	k, v, ok := strings.Cut(w, "=")
	if !ok || k == "" || !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
		return "", "", false
	}
	return k, v, true
}

// docProgramArgs returns the arguments of a command that runs the program, if it does.
func docProgramArgs(words []string, dir string, names []string) ([]string, bool) {
	if len(words) == 0 {
		return nil, false
	}
	if slices.Contains(names, path.Base(words[0])) {
		return words[1:], true
	}
	if words[0] != "go" || len(words) < 3 || words[1] != "run" {
		return nil, false
	}
	for i := 2; i < len(words); i++ {
		if strings.HasPrefix(words[i], "-") {
			continue // go run's own flags
		}
		p := strings.TrimSuffix(words[i], "/")
		if p == "./"+dir || p == "github.com/cosci-dev/cosci/"+dir {
			return words[i+1:], true
		}
		return nil, false
	}
	return nil, false
}

// docBlock is a fenced code block and the line of its first line.
type docBlock struct {
	text string
	line int
}

// docBlocks returns a Markdown document's fenced code blocks, with diagram lines blanked.
func docBlocks(doc string) []docBlock {
	var blocks []docBlock
	var fence string
	var cur []string
	start := 0
	for i, l := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(l, " \t")
		if fence == "" {
			if f := docFence(trimmed); f != "" {
				fence, cur, start = f, nil, i+2
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
			blocks = append(blocks, docBlock{strings.Join(cur, "\n"), start})
			fence = ""
			continue
		}
		if strings.ContainsFunc(l, func(r rune) bool {
			return (r >= 0x2190 && r <= 0x21ff) || (r >= 0x2500 && r <= 0x25ff) // arrows, box drawing, shapes
		}) {
			l = ""
		}
		cur = append(cur, l)
	}
	return blocks
}

// docFence returns the fence that opens a code block on this line ("" for none).
func docFence(l string) string {
	for _, c := range []string{"`", "~"} {
		n := len(l) - len(strings.TrimLeft(l, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// docCommand is one simple command of a shell text, and its line.
type docCommand struct {
	words []string
	line  int
}

// docShell splits a shell text into simple commands and their words, as a POSIX shell
// would before expansion: quotes removed, `\` newline joining lines, comments, separators
// and redirections dropped, here-documents skipped. $(...) is a word of its own, and the
// commands inside it are returned too.
func docShell(text string, line int) []docCommand {
	src := []rune(text)
	var (
		cmds    []docCommand
		cur     docCommand
		word    strings.Builder
		inWord  bool
		pending []string // here-document delimiters, to skip after this line
	)
	startWord := func() {
		if !inWord {
			inWord = true
			if len(cur.words) == 0 {
				cur.line = line
			}
		}
	}
	endWord := func() {
		if inWord {
			cur.words = append(cur.words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		if len(cur.words) > 0 {
			cmds = append(cmds, cur)
		}
		cur = docCommand{}
	}
	// readWord reads a redirection's target or a here-document's delimiter, unquoted.
	readWord := func(i int) (string, int) {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		var b strings.Builder
		for i < len(src) && !unicode.IsSpace(src[i]) && !strings.ContainsRune(";&|<>", src[i]) {
			if src[i] != '\'' && src[i] != '"' {
				b.WriteRune(src[i])
			}
			i++
		}
		return b.String(), i
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			if src[i] == '\n' {
				line++
				continue
			}
			startWord()
			word.WriteRune(src[i])
		case c == '\n':
			endCommand()
			line++
			for _, delim := range pending {
				for i+1 < len(src) {
					end := i + 1
					for end < len(src) && src[end] != '\n' {
						end++
					}
					l := strings.TrimSpace(string(src[i+1 : end]))
					i = end
					line++
					if l == delim {
						break
					}
				}
			}
			pending = nil
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '\'':
			startWord()
			for i++; i < len(src) && src[i] != '\''; i++ {
				if src[i] == '\n' {
					line++
				}
				word.WriteRune(src[i])
			}
		case c == '"':
			startWord()
			for i++; i < len(src) && src[i] != '"'; i++ {
				switch {
				case src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n':
					i++
					line++
					continue
				case src[i] == '\\' && i+1 < len(src) && strings.ContainsRune("\"\\$`", src[i+1]):
					i++
				case src[i] == '\n':
					line++
				}
				word.WriteRune(src[i])
			}
		case c == '$' && i+1 < len(src) && src[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(src); j++ {
				if src[j] == '(' {
					depth++
				} else if src[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			inner := string(src[i+2 : min(j, len(src))])
			cmds = append(cmds, docShell(inner, line)...)
			line += strings.Count(inner, "\n")
			startWord()
			word.WriteString("$(...)")
			i = j
		case c == '<' && docPlaceholderAt.MatchString(string(src[i:min(i+64, len(src))])):
			p := docPlaceholderAt.FindString(string(src[i:min(i+64, len(src))]))
			startWord()
			word.WriteString(p)
			i += len([]rune(p)) - 1
		case c == '<' || c == '>':
			if inWord && strings.Trim(word.String(), "0123456789") == "" {
				word.Reset() // a file descriptor: 2>&1
				inWord = false
			}
			endWord()
			j := i
			for j < len(src) && (src[j] == '<' || src[j] == '>') {
				j++
			}
			op := string(src[i:j])
			if j < len(src) && (src[j] == '&' || src[j] == '-') {
				j++
			}
			target, next := readWord(j)
			if op == "<<" {
				pending = append(pending, target)
			}
			i = next - 1
		case c == ';' || c == '&' || c == '|':
			endCommand()
		default:
			startWord()
			word.WriteRune(c)
		}
	}
	endCommand()
	return cmds
}

// ---- end of the docs' command lines ----
