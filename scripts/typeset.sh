#!/bin/sh
# Typesets the corpus of real typeset papers the full-text reader is tested on
# (internal/fulltext/testdata/typeset, #43) and writes each paper's truth: every probe
# sentence's page, column and section as TeX placed it (probe.sty, \pdfsavepos), turned
# into <name>.truth.json by scripts/typesettruth.
#
# Needed only to regenerate, not by `make test` (which reads the committed PDFs):
# Debian's texlive packages (texlive-latex-base, texlive-latex-extra, texlive-publishers:
# pdflatex, elsarticle, IEEEtran, revtex4-2, fancyhdr, geometry, multicol), poppler-utils
# (pdfinfo, for the summary line) and, for the word-processor paper, libreoffice-writer-nogui
# (soffice). Run as `make typeset-corpus`.
#
# The PDFs are reproducible: probe.sty omits the dates and the trailer id
# (\pdfinfoomitdate, \pdftrailerid{}) and SOURCE_DATE_EPOCH fixes the rest.
set -eu
cd "$(dirname "$0")/../internal/fulltext/testdata/typeset"
export SOURCE_DATE_EPOCH=1741910400 FORCE_SOURCE_DATE=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tex in *.tex; do
	name=${tex%.tex}
	# Twice: the second run has the cross-references and the floats where the first put them.
	for run in 1 2; do
		if ! pdflatex -interaction=nonstopmode -halt-on-error -output-directory "$tmp" "$tex" >"$tmp/$name.out"; then
			cat "$tmp/$name.out" >&2
			echo "typeset: pdflatex failed on $tex" >&2
			exit 1
		fi
	done
	cp "$tmp/$name.pdf" "$name.pdf"
	go run ../../../../scripts/typesettruth "$tmp/$name.probes" "$name.truth.json"
	echo "typeset: $name.pdf ($(pdfinfo "$name.pdf" 2>/dev/null | sed -n 's/^Pages: *//p') pages), $name.truth.json"
done
