package sandbox

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The guard reads the SQL as tokens, the way DuckDB's lexer splits it, so that a word
// inside a string literal, a quoted identifier or a comment is not taken for a keyword
// ("SELECT 'drop'" is a query) and a keyword cannot hide from a substring search in odd
// spacing or case. Where the guard and DuckDB could read a construct differently, the
// guard refuses the construct rather than guess: escape strings (E'...'), Unicode and other
// prefixed literals, dollar quoting and parameters. A block comment ends at the first */
// (DuckDB nests them: reading them flat can only see more tokens than there are, and so
// refuse more, never less).

// statementKeywords are words that begin or make a statement other than a query, each with
// the reason it is refused. Only bare words count: a column named "load" may be quoted.
var statementKeywords = map[string]Reason{
	"ATTACH": ReasonAttach, "DETACH": ReasonAttach, "USE": ReasonAttach,
	"INSTALL": ReasonExtension, "LOAD": ReasonExtension, "FORCE": ReasonExtension,
	"COPY": ReasonFile, "EXPORT": ReasonFile, "IMPORT": ReasonFile,
	"SET": ReasonSetting, "RESET": ReasonSetting, "PRAGMA": ReasonSetting,
	"CREATE": ReasonWrite, "DROP": ReasonWrite, "UPDATE": ReasonWrite, "INSERT": ReasonWrite,
	"DELETE": ReasonWrite, "ALTER": ReasonWrite, "TRUNCATE": ReasonWrite, "MERGE": ReasonWrite,
	"VACUUM": ReasonWrite, "CHECKPOINT": ReasonWrite, "COMMENT": ReasonWrite,
	"CALL": ReasonStatement, "EXECUTE": ReasonStatement, "PREPARE": ReasonStatement,
	"DEALLOCATE": ReasonStatement, "BEGIN": ReasonStatement, "COMMIT": ReasonStatement,
	"ROLLBACK": ReasonStatement, "ABORT": ReasonStatement, "TRANSACTION": ReasonStatement,
	"EXPLAIN": ReasonStatement, "ANALYZE": ReasonStatement,
}

// deniedFunctions are functions (table or scalar) that read files, run SQL given as text,
// read or change settings, or write logs, each with its reason; deniedPrefixes are whole
// families. The child checks DuckDB's parse tree against the same lists (DeniedFunction).
var deniedFunctions = map[string]Reason{
	"glob": ReasonFile, "read_text": ReasonFile, "read_blob": ReasonFile, "sniff_csv": ReasonFile,
	"delta_scan": ReasonFile, "arrow_scan": ReasonFile, "parquet_scan": ReasonFile,
	"query": ReasonStatement, "query_table": ReasonStatement, "json_execute_serialized_sql": ReasonStatement,
	"current_setting": ReasonSetting, "getenv": ReasonSetting, "getvariable": ReasonSetting,
	"which_secret": ReasonSetting, "load_aws_credentials": ReasonSetting,
	"enable_logging": ReasonStatement, "disable_logging": ReasonStatement, "truncate_duckdb_logs": ReasonStatement,
	"checkpoint": ReasonWrite, "force_checkpoint": ReasonWrite,
	"information_schema": ReasonSetting,
}

var deniedPrefixes = []struct {
	prefix string
	reason Reason
}{
	{"read_", ReasonFile}, {"parquet_", ReasonFile}, {"iceberg_", ReasonFile}, {"sqlite_", ReasonFile},
	{"postgres_", ReasonFile}, {"mysql_", ReasonFile}, {"write_", ReasonFile},
	{"duckdb_", ReasonSetting}, {"pragma_", ReasonSetting}, {"pg_", ReasonSetting},
}

// DeniedFunction says whether a function (or a catalog name) may not appear in a query,
// and why. The name is compared without case, as DuckDB does.
func DeniedFunction(name string) (Reason, bool) {
	n := strings.ToLower(name)
	if r, ok := deniedFunctions[n]; ok {
		return r, true
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(n, p.prefix) {
			return p.reason, true
		}
	}
	return "", false
}

type tokenKind int

const (
	tokWord   tokenKind = iota // a bare identifier or keyword
	tokQuoted                  // a "quoted identifier"
	tokString                  // a 'string literal'
	tokSemi                    // ;
	tokOther                   // a number, an operator, a parenthesis ...
)

type token struct {
	kind tokenKind
	text string // a word as written, a quoted identifier or string's content
	pos  int    // its offset in the SQL
}

// Guard refuses SQL that is not exactly one read-only statement over the loaded tables:
// its first word must be SELECT, WITH, VALUES or FROM (or an opening parenthesis), only
// whitespace and comments may follow a ';', no statement keyword may appear as a bare
// word, no denied function may be named (bare or quoted), and no string or path may stand
// where a table does (FROM '/etc/passwd' reads the file).
func Guard(sql string) error {
	toks, err := lex(sql)
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return refuse(ReasonStatement, LayerGuard, "the query is empty")
	}
	for i, t := range toks {
		if t.kind == tokSemi {
			if i != len(toks)-1 {
				return refuse(ReasonStatement, LayerGuard, "only one statement may run: something other than a comment follows a ';'")
			}
			toks = toks[:i]
			break
		}
	}
	if len(toks) == 0 {
		return refuse(ReasonStatement, LayerGuard, "the query is empty")
	}
	switch first := toks[0]; {
	case first.kind == tokOther && first.text == "(":
	case first.kind == tokWord && isQueryStart(first.text):
	default:
		if first.kind == tokWord {
			if r, ok := statementKeywords[strings.ToUpper(first.text)]; ok {
				return refuse(r, LayerGuard, "%s statements may not run: only one read-only query (SELECT, WITH ... SELECT, VALUES)", strings.ToUpper(first.text))
			}
		}
		return refuse(ReasonStatement, LayerGuard, "only a read-only query may run: it must begin with SELECT, WITH, VALUES or FROM")
	}
	for i, t := range toks {
		if err := checkToken(toks, i, t); err != nil {
			return err
		}
	}
	return nil
}

// Statement is sql up to its first ';' (read as Guard reads it), so that the child can
// set the statement inside a query of its own; sql itself if it has none or cannot be
// read (DuckDB's parser then says what is wrong with it).
func Statement(sql string) string {
	toks, err := lex(sql)
	if err != nil {
		return sql
	}
	for _, t := range toks {
		if t.kind == tokSemi {
			return sql[:t.pos]
		}
	}
	return sql
}

func isQueryStart(w string) bool {
	switch strings.ToUpper(w) {
	case "SELECT", "WITH", "VALUES", "FROM":
		return true
	}
	return false
}

// checkToken refuses one token by the rules Guard lists.
func checkToken(toks []token, i int, t token) error {
	switch t.kind {
	case tokWord:
		if r, ok := statementKeywords[strings.ToUpper(t.text)]; ok {
			return refuse(r, LayerGuard, "the keyword %s may not appear in a query (a column of that name can be written quoted: \"%s\")", strings.ToUpper(t.text), strings.ToLower(t.text))
		}
		if r, ok := DeniedFunction(t.text); ok && calledOrRead(toks, i) {
			return refuse(r, LayerGuard, "%s may not be used in a query: it %s", strings.ToLower(t.text), why(r))
		}
	case tokQuoted:
		if r, ok := DeniedFunction(t.text); ok && calledOrRead(toks, i) {
			return refuse(r, LayerGuard, "%q may not be named in a query: it %s", t.text, why(r))
		}
		if afterFrom(toks, i) && strings.ContainsAny(t.text, "./\\:") {
			return refuse(ReasonFile, LayerGuard, "a table named like a file (%q) would be read from the file system: only the loaded tables may be read", t.text)
		}
	case tokString:
		if afterFrom(toks, i) {
			return refuse(ReasonFile, LayerGuard, "a string where a table stands would be read as a file: only the loaded tables may be read")
		}
	}
	return nil
}

// calledOrRead says whether the name at token i is called (a '(' follows), read as a
// table (it follows FROM or JOIN) or qualifies another name (a '.' follows): a column
// may be called read_count, a function may not be.
func calledOrRead(toks []token, i int) bool {
	if i+1 < len(toks) && toks[i+1].kind == tokOther && (toks[i+1].text == "(" || toks[i+1].text == ".") {
		return true
	}
	return afterFrom(toks, i)
}

// afterFrom says whether token i stands where a table does: right after FROM or JOIN.
func afterFrom(toks []token, i int) bool {
	if i == 0 || toks[i-1].kind != tokWord {
		return false
	}
	switch strings.ToUpper(toks[i-1].text) {
	case "FROM", "JOIN":
		return true
	}
	return false
}

func why(r Reason) string {
	switch r {
	case ReasonFile:
		return "reads files"
	case ReasonSetting:
		return "reads the database's settings or environment"
	case ReasonWrite:
		return "writes"
	default:
		return "runs something other than a read-only query"
	}
}

// lex splits SQL into tokens, dropping whitespace and comments.
func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(s[i:], "--"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				return toks, nil
			}
			i += end + 1
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, refuse(ReasonParse, LayerGuard, "a comment is not closed")
			}
			i += 2 + end + 2
		case c == '\'' || c == '"':
			if c == '\'' && i > 0 && isWordByte(s[i-1]) || c == '\'' && i > 0 && s[i-1] == '&' {
				return nil, refuse(ReasonParse, LayerGuard, "prefixed string literals (E'...', U&'...', X'...') may not be used: write a plain '...' string")
			}
			text, n, ok := quoted(s[i:], c)
			if !ok {
				return nil, refuse(ReasonParse, LayerGuard, "a quoted string or name is not closed")
			}
			kind := tokString
			if c == '"' {
				kind = tokQuoted
			}
			toks = append(toks, token{kind: kind, text: text, pos: i})
			i += n
		case c == '$':
			return nil, refuse(ReasonParse, LayerGuard, "'$' (dollar quoting or parameters) may not be used in a query")
		case c == ';':
			toks = append(toks, token{kind: tokSemi, text: ";", pos: i})
			i++
		case isWordStart(s, i):
			j := i
			for j < len(s) && isWordByteAt(s, j) {
				_, w := utf8.DecodeRuneInString(s[j:])
				j += w
			}
			toks = append(toks, token{kind: tokWord, text: s[i:j], pos: i})
			i = j
		default:
			_, w := utf8.DecodeRuneInString(s[i:])
			toks = append(toks, token{kind: tokOther, text: s[i : i+w], pos: i})
			i += w
		}
	}
	return toks, nil
}

// quoted reads a literal or identifier opened by q at s[0], where a doubled q stands for
// one: its content, its length in s, and whether it was closed.
func quoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", len(s), false
}

func isWordStart(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == '_' || unicode.IsLetter(r)
}

func isWordByteAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
