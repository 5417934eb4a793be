#!/bin/sh
# Typesets the corpus of real typeset papers the full-text reader is tested on
# (internal/fulltext/testdata/typeset, #43) and writes each paper's truth: every probe
# sentence's page, column and section as TeX placed it (probe.sty, \pdfsavepos), turned
# into <name>.truth.json by scripts/typesettruth.
#
# Needed only to regenerate, not by `make test` (which reads the committed PDFs):
# Debian's texlive packages (texlive-latex-base, texlive-latex-extra, texlive-publishers:
# pdflatex, elsarticle, IEEEtran, revtex4-2, fancyhdr, geometry, multicol), poppler-utils
# (pdfinfo: the word-processor paper's destinations and page count) and, for the
# word-processor paper, libreoffice-writer-nogui (soffice) with its Liberation fonts. Run
# as `make typeset-corpus`.
#
# The TeX PDFs are reproducible byte for byte: probe.sty omits the dates and the trailer
# id (\pdfinfoomitdate, \pdftrailerid{}) and SOURCE_DATE_EPOCH fixes the rest.
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
# Papers written in a word processor: exported to PDF by LibreOffice with their bookmarks
# kept as named destinations (where each probe sentence starts and ends), in a profile of
# their own so that no user's LibreOffice settings change the layout. LibreOffice writes
# the date of the export into the PDF, so these PDFs differ by their dates from one run to
# the next; their text and layout do not.
for fodt in *.fodt; do
	[ -e "$fodt" ] || continue
	name=${fodt%.fodt}
	soffice -env:UserInstallation="file://$tmp/lo-profile" --headless \
		--convert-to 'pdf:writer_pdf_Export:{"ExportBookmarksToPDFDestination":{"type":"boolean","value":"true"}}' \
		--outdir "$tmp" "$fodt" >"$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out" >&2; echo "typeset: soffice failed on $fodt" >&2; exit 1; }
	cp "$tmp/$name.pdf" "$name.pdf"
	go run ../../../../scripts/typesettruth "$fodt" "$name.pdf" "$name.truth.json"
	echo "typeset: $name.pdf ($(pdfinfo "$name.pdf" 2>/dev/null | sed -n 's/^Pages: *//p') pages), $name.truth.json"
done
# The held-out papers (internal/fulltext/testdata/heldout): written after the reader, in
# classes the corpus does not use (llncs, amsart, article + authblk, elsarticle 5p), typeset the same way
# with the corpus's probe.sty (found through TEXINPUTS).
cd ../heldout
for tex in *.tex; do
	name=${tex%.tex}
	for run in 1 2; do
		if ! TEXINPUTS=../typeset: pdflatex -interaction=nonstopmode -halt-on-error -output-directory "$tmp" "$tex" >"$tmp/$name.out"; then
			cat "$tmp/$name.out" >&2
			echo "typeset: pdflatex failed on heldout/$tex" >&2
			exit 1
		fi
	done
	cp "$tmp/$name.pdf" "$name.pdf"
	go run ../../../../scripts/typesettruth "$tmp/$name.probes" "$name.truth.json"
	echo "typeset: heldout/$name.pdf ($(pdfinfo "$name.pdf" 2>/dev/null | sed -n 's/^Pages: *//p') pages), $name.truth.json"
done
