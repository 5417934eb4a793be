#!/bin/sh
# Writes the lab tables internal/dataset is tested on (internal/dataset/testdata/lab), each
# made the way the world makes them and each with its truth beside it, dumped by its maker
# (TestLabTables compares every cell the reader reads with it):
#   - R (scripts/labtables.R): write.csv, write.csv2, write.table, a byte-order mark and
#     CRLF as Excel's "CSV UTF-8", Latin-1, German and American formatting, from R's own
#     datasets (iris, mtcars, airquality, ToothGrowth, ChickWeight);
#   - pandas (scripts/labtables.py): to_csv with sep=';', decimal=',', na_rep='NA',
#     date_format, utf-8-sig and CRLF, from R's dumps of the same frames;
#   - Gnumeric (ssconvert): R's write.csv read in the C locale and written again as a
#     German spreadsheet shows it (decimal commas, WAHR/FALSCH), in a de_DE.UTF-8 locale
#     compiled into a temporary directory (localedef; the machine's locales are untouched).
# LibreOffice is not used: this machine's has no Calc (libreoffice-writer-nogui only).
#
# Needed only to regenerate, not by `make test` (which reads the committed files):
# Debian's r-base-core, python3-pandas (run with /usr/bin/python3), gnumeric and locales
# (localedef and the de_DE source). Run as `make lab-tables`.
set -eu
out="$(cd "$(dirname "$0")/../internal/dataset/testdata" && pwd)/lab"
scripts="$(cd "$(dirname "$0")" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
rm -f "$out"/*
LANG=C.UTF-8 LC_ALL=C.UTF-8 Rscript "$scripts/labtables.R" "$out" "$tmp"
/usr/bin/python3 "$scripts/labtables.py" "$out"

mkdir -p "$tmp/locale"
localedef -i de_DE -f UTF-8 "$tmp/locale/de_DE.UTF-8"
LC_ALL=C.UTF-8 ssconvert "$tmp/gnumeric-source.csv" "$tmp/lab.gnumeric" 2>"$tmp/ssconvert.err" ||
	{ cat "$tmp/ssconvert.err" >&2; exit 1; }
LOCPATH="$tmp/locale" LC_ALL=de_DE.UTF-8 ssconvert --export-type=Gnumeric_stf:stf_assistant \
	-O 'separator=; format=preserve locale=de_DE.UTF-8' "$tmp/lab.gnumeric" "$out/gnumeric-lab-de.csv" 2>"$tmp/ssconvert.err" ||
	{ cat "$tmp/ssconvert.err" >&2; exit 1; }
for f in "$out"/*.truth.json; do
	echo "lab-tables: $(basename "${f%.truth.json}") ($(sed -n 's/.*"maker": *"\([^"]*\)".*/\1/p' "$f" | head -1))"
done
