// Package doccheck reads the command lines out of cosci's documentation (README.md and
// docs/*.md), for the tests that check them against the programs' own parsers, and checks
// that the docs name every flag a program's usage lists: starter/docs_test.go and
// worker/docs_test.go. Only those tests use it.
//
// It is a package rather than a _test.go file because the starter and the worker are both
// package main, and one program's tests cannot import another's test code; before it, each
// docs_test.go held a copy of the extraction, and a test kept the copies the same. It imports
// nothing of cosci's and not Temporal, so a test of either program (or of this package) can
// use it without building anything else.
package doccheck

import (
	"fmt"
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

// module is the module's path, as `go run` may name a program's package.
const module = "github.com/cosci-dev/cosci"

// placeholders are the placeholders the docs may use in a command line, and the value the
// check gives each.
var placeholders = map[string]string{
	"session-id":    "tau-1",
	"schedule-id":   "review-1a2b3c4d",
	"call-id":       "call-3",
	"hypothesis-id": "h-0003",
	"checkpoint":    "2",
}

// Line is one command line of a doc's code block that runs the program checked.
type Line struct {
	Where string            // file:line
	Text  string            // the words as read, for messages
	Env   map[string]string // NAME=value before the program, over the block's exports
	Args  []string          // the program's arguments, placeholders filled in
}

// Files reads README.md and docs/*.md of the module whose directory is root, by name
// relative to root ("README.md", "docs/commands.md").
func Files(t testing.TB, root string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no docs/*.md in %s (%v)", root, err)
	}
	docs := map[string]string{}
	for _, name := range append(names, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.ToSlash(rel)] = string(b)
	}
	return docs
}

// All is the docs in one text, in the order of their names, each on lines of its own.
func All(docs map[string]string) string {
	var all strings.Builder
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		all.WriteString(docs[name])
		all.WriteString("\n")
	}
	return all.String()
}

// Mentions reports whether text holds phrase as words of its own: "--limit" is not
// mentioned by "--limit-x", nor "starter state" by "starter statex".
func Mentions(text, phrase string) bool {
	return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(phrase) + `([^\w-]|$)`).MatchString(text)
}

// flagLine is a flag's line in a usage text of the flag package: "  -name value".
var flagLine = regexp.MustCompile(`(?m)^  -([\w-]+)`)

// FlagsDocumented checks that text (the docs, as All gives them) mentions as --name every
// flag that usage, a usage text of the flag package, lists for the program or command of;
// it returns how many flags usage lists, for a test to see that it still read some.
func FlagsDocumented(t testing.TB, text, usage, of string) int {
	t.Helper()
	flags := flagLine.FindAllStringSubmatch(usage, -1)
	for _, f := range flags {
		if !Mentions(text, "--"+f[1]) {
			t.Errorf("no doc mentions --%s, a flag of %s: document it in docs/commands.md (or docs/operating.md)", f[1], of)
		}
	}
	return len(flags)
}

// CommandLines returns the command lines of the docs' fenced code blocks that run the
// program whose binary is called one of names (bin/name, name, ./bin/name) or that is run
// from the module's directory dir (go run ./dir). A block is read as a shell reads it: line
// continuations, quotes, comments, `;`, `&&`, `|` and `&` between commands, redirections,
// here-documents, `export NAME=value` and NAME=value before a command. Diagram lines (those
// with box-drawing characters or arrows) are not commands. A placeholder such as
// <session-id> is replaced by a plausible value; one the check does not know is an error of
// the test.
func CommandLines(t testing.TB, docs map[string]string, dir string, names ...string) []Line {
	t.Helper()
	var out []Line
	for _, file := range slices.Sorted(maps.Keys(docs)) {
		for _, b := range blocks(docs[file]) {
			env := map[string]string{}
			for _, c := range shell(b.text, b.line) {
				words := c.words
				if words[0] == "export" {
					for _, w := range words[1:] {
						if k, v, ok := assignment(w); ok {
							env[k] = v
						}
					}
					continue
				}
				cmdEnv := maps.Clone(env)
				for len(words) > 0 {
					k, v, ok := assignment(words[0])
					if !ok {
						break
					}
					cmdEnv[k] = v
					words = words[1:]
				}
				args, ok := programArgs(words, dir, names)
				if !ok {
					continue
				}
				l := Line{Where: fmt.Sprintf("%s:%d", file, c.line), Text: strings.Join(words, " "), Env: cmdEnv}
				for _, a := range args {
					v, err := substitute(a)
					if err != nil {
						t.Errorf("%s: %s: %v", l.Where, l.Text, err)
					}
					l.Args = append(l.Args, v)
				}
				out = append(out, l)
			}
		}
	}
	return out
}

var (
	placeholder   = regexp.MustCompile(`<([a-z][a-z0-9-]*)>`)
	placeholderAt = regexp.MustCompile(`^<[a-z][a-z0-9-]*>`)
)

// substitute fills in the placeholders of a word.
func substitute(word string) (string, error) {
	var err error
	v := placeholder.ReplaceAllStringFunc(word, func(p string) string {
		name := p[1 : len(p)-1]
		if v, ok := placeholders[name]; ok {
			return v
		}
		err = fmt.Errorf("unknown placeholder %s: use one of %v, or add it to placeholders in internal/doccheck", p, slices.Sorted(maps.Keys(placeholders)))
		return p
	})
	return v, err
}

// assignment reads NAME=value.
func assignment(w string) (string, string, bool) {
	k, v, ok := strings.Cut(w, "=")
	if !ok || k == "" || !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
		return "", "", false
	}
	return k, v, true
}

// programArgs returns the arguments of a command that runs the program, if it does.
func programArgs(words []string, dir string, names []string) ([]string, bool) {
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
		if p == "./"+dir || p == module+"/"+dir {
			return words[i+1:], true
		}
		return nil, false
	}
	return nil, false
}

// block is a fenced code block and the line of its first line.
type block struct {
	text string
	line int
}

// blocks returns a Markdown document's fenced code blocks, with diagram lines blanked.
func blocks(doc string) []block {
	var blocks []block
	var fence string
	var cur []string
	start := 0
	for i, l := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(l, " \t")
		if fence == "" {
			if f := openingFence(trimmed); f != "" {
				fence, cur, start = f, nil, i+2
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
			blocks = append(blocks, block{strings.Join(cur, "\n"), start})
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

// openingFence returns the fence that opens a code block on this line ("" for none).
func openingFence(l string) string {
	for _, c := range []string{"`", "~"} {
		n := len(l) - len(strings.TrimLeft(l, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// command is one simple command of a shell text, and its line.
type command struct {
	words []string
	line  int
}

// shell splits a shell text into simple commands and their words, as a POSIX shell
// would before expansion: quotes removed, `\` newline joining lines, comments, separators
// and redirections dropped, here-documents skipped. $(...) is a word of its own, and the
// commands inside it are returned too.
func shell(text string, line int) []command {
	sh := &shellSplitter{src: []rune(text), line: line}
	src := sh.src
	for sh.i = 0; sh.i < len(src); sh.i++ {
		c := src[sh.i]
		switch {
		case c == '\\' && sh.i+1 < len(src):
			sh.escaped()
		case c == '\n':
			sh.endCommand()
			sh.line++
			sh.skipHereDocs()
		case c == ' ' || c == '\t' || c == '\r':
			sh.endWord()
		case c == '#' && !sh.inWord:
			for sh.i+1 < len(src) && src[sh.i+1] != '\n' {
				sh.i++
			}
		case c == '\'':
			sh.singleQuoted()
		case c == '"':
			sh.doubleQuoted()
		case c == '$' && sh.i+1 < len(src) && src[sh.i+1] == '(':
			sh.substitution()
		case c == '<' && placeholderAt.MatchString(string(src[sh.i:min(sh.i+64, len(src))])):
			p := placeholderAt.FindString(string(src[sh.i:min(sh.i+64, len(src))]))
			sh.startWord()
			sh.word.WriteString(p)
			sh.i += len([]rune(p)) - 1
		case c == '<' || c == '>':
			sh.redirection()
		case c == ';' || c == '&' || c == '|':
			sh.endCommand()
		default:
			sh.startWord()
			sh.word.WriteRune(c)
		}
	}
	sh.endCommand()
	return sh.cmds
}

// shellSplitter is where shell is in its text: at src[i], on line, in the command cur
// and, when inWord, in its word.
type shellSplitter struct {
	src     []rune
	i       int
	line    int
	cmds    []command
	cur     command
	word    strings.Builder
	inWord  bool
	pending []string // here-document delimiters, to skip after this line
}

func (sh *shellSplitter) startWord() {
	if !sh.inWord {
		sh.inWord = true
		if len(sh.cur.words) == 0 {
			sh.cur.line = sh.line
		}
	}
}

func (sh *shellSplitter) endWord() {
	if sh.inWord {
		sh.cur.words = append(sh.cur.words, sh.word.String())
		sh.word.Reset()
		sh.inWord = false
	}
}

func (sh *shellSplitter) endCommand() {
	sh.endWord()
	if len(sh.cur.words) > 0 {
		sh.cmds = append(sh.cmds, sh.cur)
	}
	sh.cur = command{}
}

// readWord reads a redirection's target or a here-document's delimiter, unquoted, from
// src[i], and says where it ends.
func (sh *shellSplitter) readWord(i int) (string, int) {
	src := sh.src
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

// escaped reads a backslash's character into the word, or joins the lines it ends.
func (sh *shellSplitter) escaped() {
	sh.i++
	if sh.src[sh.i] == '\n' {
		sh.line++
		return
	}
	sh.startWord()
	sh.word.WriteRune(sh.src[sh.i])
}

// skipHereDocs skips, after a line's end, the here-documents the line opened.
func (sh *shellSplitter) skipHereDocs() {
	src := sh.src
	for _, delim := range sh.pending {
		for sh.i+1 < len(src) {
			end := sh.i + 1
			for end < len(src) && src[end] != '\n' {
				end++
			}
			l := strings.TrimSpace(string(src[sh.i+1 : end]))
			sh.i = end
			sh.line++
			if l == delim {
				break
			}
		}
	}
	sh.pending = nil
}

// singleQuoted reads a '...' string into the word, as it is.
func (sh *shellSplitter) singleQuoted() {
	src := sh.src
	sh.startWord()
	for sh.i++; sh.i < len(src) && src[sh.i] != '\''; sh.i++ {
		if src[sh.i] == '\n' {
			sh.line++
		}
		sh.word.WriteRune(src[sh.i])
	}
}

// doubleQuoted reads a "..." string into the word, with the escapes a shell takes in it.
func (sh *shellSplitter) doubleQuoted() {
	src := sh.src
	sh.startWord()
	for sh.i++; sh.i < len(src) && src[sh.i] != '"'; sh.i++ {
		switch {
		case src[sh.i] == '\\' && sh.i+1 < len(src) && src[sh.i+1] == '\n':
			sh.i++
			sh.line++
			continue
		case src[sh.i] == '\\' && sh.i+1 < len(src) && strings.ContainsRune("\"\\$`", src[sh.i+1]):
			sh.i++
		case src[sh.i] == '\n':
			sh.line++
		}
		sh.word.WriteRune(src[sh.i])
	}
}

// substitution reads a $(...) as the word "$(...)", and the commands inside it as commands.
func (sh *shellSplitter) substitution() {
	src := sh.src
	depth, j := 0, sh.i+1
	for ; j < len(src); j++ {
		if src[j] == '(' {
			depth++
		} else if src[j] == ')' {
			if depth--; depth == 0 {
				break
			}
		}
	}
	inner := string(src[sh.i+2 : min(j, len(src))])
	sh.cmds = append(sh.cmds, shell(inner, sh.line)...)
	sh.line += strings.Count(inner, "\n")
	sh.startWord()
	sh.word.WriteString("$(...)")
	sh.i = j
}

// redirection drops a redirection and its target (and a file descriptor before it), and
// keeps a here-document's delimiter, to skip the document after the line.
func (sh *shellSplitter) redirection() {
	src := sh.src
	if sh.inWord && strings.Trim(sh.word.String(), "0123456789") == "" {
		sh.word.Reset() // a file descriptor: 2>&1
		sh.inWord = false
	}
	sh.endWord()
	j := sh.i
	for j < len(src) && (src[j] == '<' || src[j] == '>') {
		j++
	}
	op := string(src[sh.i:j])
	if j < len(src) && (src[j] == '&' || src[j] == '-') {
		j++
	}
	target, next := sh.readWord(j)
	if op == "<<" {
		sh.pending = append(sh.pending, target)
	}
	sh.i = next - 1
}
