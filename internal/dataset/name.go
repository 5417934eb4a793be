package dataset

import (
	"path/filepath"
	"regexp"
	"strings"
)

// tableName is what a table may be called in analyses: a plain SQL identifier, so the
// analyst's query names it without quoting, and the sandbox loads it under that name.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// ValidTableName says whether name may name a table in analyses: letters, digits and _,
// starting with a letter or _, at most 63 bytes.
func ValidTableName(name string) bool { return tableName.MatchString(name) }

// TableName is a table's name from its file's name, for `starter data add` and the desk's
// upload alike: "Plate reads (v2).csv" is "Plate_reads_v2". A name that would start with a
// digit gets "t_" before it.
func TableName(file string) string {
	file = strings.ReplaceAll(file, "\\", "/") // a browser on Windows may send the whole path
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		name = "t_" + name
	}
	return strings.TrimSuffix(name[:min(len(name), 63)], "_")
}
