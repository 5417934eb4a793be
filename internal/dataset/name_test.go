package dataset

import "testing"

func TestTableName(t *testing.T) {
	tests := []struct{ file, want string }{
		{"Plate reads (v2).csv", "Plate_reads_v2"},
		{"/data/lab/assay.tsv", "assay"},
		{`C:\Users\ada\Desktop\Messung 3.csv`, "Messung_3"},
		{"2026-11-27.csv", "t_2026_11_27"},
		{"Größe.csv", "Gr_e"},
		{"...csv", "t"},
		{"<script>.csv", "script"},
	}
	for _, tt := range tests {
		got := TableName(tt.file)
		if got != tt.want {
			t.Errorf("TableName(%q) = %q, want %q", tt.file, got, tt.want)
		}
		if !ValidTableName(got) {
			t.Errorf("TableName(%q) = %q, which ValidTableName refuses", tt.file, got)
		}
	}
	for _, bad := range []string{"", "1a", "a b", "a;DROP", string(make([]byte, 64))} {
		if ValidTableName(bad) {
			t.Errorf("ValidTableName(%q) = true", bad)
		}
	}
}
