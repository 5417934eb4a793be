package main

// The documentation's starter command lines are checked against the starter's own command
// parser, and every command and flag of the starter must be documented. The worker's
// command lines and flags are checked the same way in worker/docs_test.go, which shares the
// extraction below.

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

// The message of a command line that parsed and went on to dial Temporal: the test points
// TEMPORAL_CONFIG_FILE at a file that is not TOML, so the client options cannot be read and
// nothing is dialled.
const docsNotDialled = "cannot read the Temporal client configuration"

// docsInputFlags are the starter flags that read a file while the command line is parsed;
// the test gives them a file of its own.
var docsInputFlags = []string{"result-file", "predictions-file"}

// TestDocsStarterCommandLines parses every starter command line of the README's and
// docs/*.md's code blocks with the starter's own dispatcher (run), stopping it where it
// would dial Temporal.
func TestDocsStarterCommandLines(t *testing.T) {
	lines := docCommandLines(t, docFiles(t), "starter", "starter")
	if len(lines) < 30 {
		t.Fatalf("found only %d starter command lines in the docs; does the extraction still work?", len(lines))
	}
	t.Logf("%d starter command lines", len(lines))
	dir := t.TempDir()
	config := filepath.Join(dir, "temporal.toml")
	input := filepath.Join(dir, "input.txt")
	for file, text := range map[string]string{config: "this is [not toml\n", input: "a line of input\n"} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", config)
	t.Setenv("TEMPORAL_PROFILE", "")
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // had anything dialled after all, it fails at once
	t.Setenv("COSCI_STORE", filepath.Join(dir, "no-store"))
	t.Setenv("PGCONNECT_TIMEOUT", "1")
	t.Chdir(dir)
	oldStdin := stdin
	t.Cleanup(func() { stdin = oldStdin })

	for _, l := range lines {
		args := slices.Clone(l.args)
		for i, a := range args {
			for _, f := range docsInputFlags {
				switch {
				case (a == "-"+f || a == "--"+f) && i+1 < len(args) && args[i+1] != "-":
					args[i+1] = input
				case strings.HasPrefix(a, "-"+f+"=") || strings.HasPrefix(a, "--"+f+"="):
					if _, v, _ := strings.Cut(a, "="); v != "-" {
						args[i] = "--" + f + "=" + input
					}
				}
			}
		}
		stdin = strings.NewReader("a line of input\n")
		_, errOut := quiet(t)
		code := run(args)
		msg := strings.TrimSpace(errOut.String())
		switch {
		case code == 0: // help
		case code == 1 && strings.Contains(msg, docsNotDialled): // parsed
		case code == 2:
			t.Errorf("%s: %s\n\tdoes not parse: %s", l.where, l.text, msg)
		default:
			t.Errorf("%s: %s\n\texited %d before it reached Temporal: %s", l.where, l.text, code, msg)
		}
	}
}

// TestDocsNameEveryStarterCommand: every command and subcommand of the starter, and every
// flag each takes, appears in the README or docs/*.md.
func TestDocsNameEveryStarterCommand(t *testing.T) {
	var all strings.Builder
	for _, text := range docFiles(t) {
		all.WriteString(text)
	}
	docs := all.String()
	check := func(cmd ...string) {
		t.Helper()
		name := "starter " + strings.Join(cmd, " ")
		if !docMentions(docs, name) {
			t.Errorf("no doc mentions the command %q: add it to docs/commands.md", name)
		}
		out, _ := quiet(t)
		if code := run(append(slices.Clone(cmd), "-h")); code != 0 {
			t.Fatalf("%s -h exited %d", name, code)
		}
		for _, m := range regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(out.String(), -1) {
			if !docMentions(docs, "--"+m[1]) {
				t.Errorf("no doc mentions --%s, a flag of %s: add it to docs/commands.md", m[1], name)
			}
		}
	}
	for _, c := range commands {
		if c.name == "schedule" {
			continue // its subcommands, below
		}
		check(c.name)
	}
	_, usageText, _ := strings.Cut(scheduleUsage, "Subcommands:\n")
	usageText, _, _ = strings.Cut(usageText, "\n\n")
	subs := regexp.MustCompile(`(?m)^  ([a-z]+)\b`).FindAllStringSubmatch(usageText, -1)
	if len(subs) == 0 {
		t.Fatal("found no subcommands in schedule's usage")
	}
	for _, s := range subs {
		check("schedule", s[1])
	}
}

// TestDocsCheckCatchesAMistake: the check refuses a misspelled flag, an unknown command and
// a placeholder it does not know, and reads continuations, comments and environment
// prefixes as a shell does.
func TestDocsCheckCatchesAMistake(t *testing.T) {
	doc := "```sh\n" +
		"COSCI_STORE=/tmp/s go run ./starter state <session-id> \\\n  --limit 5   # a comment\n" +
		"bin/starter status tau-1 --jsn\n" +
		"make build && starter frobnicate\n" +
		"```\n"
	lines := docCommandLines(t, map[string]string{"doc.md": doc}, "starter", "starter")
	if len(lines) != 3 {
		t.Fatalf("found %d command lines, want 3: %+v", len(lines), lines)
	}
	if got := strings.Join(lines[0].args, " "); got != "state tau-1 --limit 5" || lines[0].env["COSCI_STORE"] != "/tmp/s" || lines[0].where != "doc.md:2" {
		t.Errorf("first line read as %q, env %v, at %s", got, lines[0].env, lines[0].where)
	}
	for _, l := range lines[1:] {
		_, errOut := quiet(t)
		if code := run(l.args); code != 2 {
			t.Errorf("%s: exited %d, want 2 (%s)", l.text, code, errOut)
		}
	}
	if _, err := docSubstitute("<no-such-placeholder>"); err == nil {
		t.Error("an unknown placeholder was accepted")
	}
}

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
