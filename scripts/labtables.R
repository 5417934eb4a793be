# Writes lab tables the way R users export them, and beside each its truth: the data
# frame's values and classes as R holds them, dumped by R itself (internal/dataset's
# TestLabTables compares every cell the reader reads with them). Values come from R's own
# datasets (iris, mtcars, airquality, ToothGrowth, ChickWeight), which the reader was not
# written from. Run by scripts/labtables.sh (`make lab-tables`), not by `make test`.
#
# Usage: Rscript labtables.R OUTDIR
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]

json_str <- function(s) {
  s <- gsub("\\", "\\\\", s, fixed = TRUE)
  s <- gsub("\"", "\\\"", s, fixed = TRUE)
  s <- gsub("\n", "\\n", s, fixed = TRUE)
  s <- gsub("\r", "\\r", s, fixed = TRUE)
  s <- gsub("\t", "\\t", s, fixed = TRUE)
  paste0("\"", s, "\"")
}

class_of <- function(x) {
  if (inherits(x, "POSIXct")) return("POSIXct")
  if (inherits(x, "Date")) return("Date")
  if (is.factor(x)) return("factor")
  class(x)[1]
}

# json_values writes a column as R holds it: NA and NaN as null (the reader's rule: NaN is
# missing), infinities as the strings "Inf" and "-Inf", doubles to 17 digits.
json_values <- function(x) {
  v <- if (inherits(x, "POSIXct")) {
    json_str(format(x, "%Y-%m-%d %H:%M:%S", tz = "UTC"))
  } else if (inherits(x, "Date")) {
    json_str(format(x, "%Y-%m-%d"))
  } else if (is.factor(x) || is.character(x)) {
    json_str(as.character(x))
  } else if (is.logical(x)) {
    ifelse(x, "true", "false")
  } else if (is.integer(x)) {
    as.character(x)
  } else {
    ifelse(is.infinite(x), ifelse(x > 0, "\"Inf\"", "\"-Inf\""), sprintf("%.17g", x))
  }
  v[is.na(x)] <- "null"
  paste0("[", paste(v, collapse = ","), "]")
}

# write_truth dumps df (with its row names as a first column when the file has them) and
# how the file was written: the maker and the options a reader must be given.
write_truth <- function(df, file, maker, row_names = FALSE, options = "{}") {
  if (row_names) {
    df <- cbind(data.frame(row_names = rownames(df), stringsAsFactors = FALSE), df)
    names(df)[1] <- ""
  }
  cols <- vapply(seq_along(df), function(i) {
    sprintf("{\"name\":%s,\"class\":%s,\"values\":%s}", json_str(names(df)[i]),
            json_str(class_of(df[[i]])), json_values(df[[i]]))
  }, "")
  text <- sprintf("{\"file\":%s,\"maker\":%s,\"options\":%s,\"rows\":%d,\n\"columns\":[\n%s\n]}\n",
                  json_str(file), json_str(maker), options, nrow(df), paste(cols, collapse = ",\n"))
  writeLines(text, file.path(out, sub("\\.[a-z]+$", ".truth.json", file)), useBytes = TRUE)
}

rver <- paste("R", getRversion())

# iris: write.csv, the default export (comma, '.', strings quoted).
write.csv(iris, file.path(out, "r-iris.csv"), row.names = FALSE)
write_truth(iris, "r-iris.csv", paste(rver, "write.csv"))

# mtcars: write.csv2 (semicolons, decimal commas) with its row names under an empty header.
write.csv2(mtcars, file.path(out, "r-mtcars-csv2.csv"))
write_truth(mtcars, "r-mtcars-csv2.csv", paste(rver, "write.csv2"), row_names = TRUE)

# airquality with its NAs and a date per row (1973), by write.csv2.
aq <- airquality
aq$Date <- as.Date(sprintf("1973-%02d-%02d", aq$Month, aq$Day))
write.csv2(aq, file.path(out, "r-airquality-csv2.csv"), row.names = FALSE)
write_truth(aq, "r-airquality-csv2.csv", paste(rver, "write.csv2"))

# ToothGrowth as a tab-separated file without quotes.
write.table(ToothGrowth, file.path(out, "r-toothgrowth.tsv"), sep = "\t", quote = FALSE, row.names = FALSE)
write_truth(ToothGrowth, "r-toothgrowth.tsv", paste(rver, "write.table sep='\\t' quote=FALSE"))

# ChickWeight by write.table's defaults: space-separated, row names without a header cell.
cw <- as.data.frame(ChickWeight)
write.table(cw, file.path(out, "r-chickweight.txt"))
write_truth(cw, "r-chickweight.txt", paste(rver, "write.table"), row_names = TRUE,
            options = "{\"delimiter\":\" \"}")

# A lab's own table, drawn from ChickWeight: headers with units, thousands, dates with
# days above 12, timestamps, booleans with NAs, an infinity and a NaN, and notes with
# commas, semicolons, quotes, line breaks and umlauts.
cw60 <- ChickWeight[seq(1, 578, length.out = 60), ]
lab <- data.frame(
  chick = as.character(cw60$Chick),
  diet = cw60$Diet,
  dose = cw60$weight * 12.5 + 0.25,
  weight = as.numeric(cw60$weight),
  day = as.Date("2023-01-01") + cw60$Time,
  measured = as.POSIXct("2023-01-01 08:00:00", tz = "UTC") + cw60$Time * 86400 + cw60$weight * 60,
  fed = cw60$weight > 100,
  note = rep(c("ok", "Gewicht geschätzt; Waage 2", "said \"late\", re-weighed",
               "two\nlines", "Müller, Größe"), length.out = 60),
  stringsAsFactors = FALSE
)
names(lab)[3:4] <- c("dose (mg/kg)", "weight [g]")
lab$fed[c(3, 17, 41)] <- NA
lab$`dose (mg/kg)`[c(5, 29)] <- NA
lab$`dose (mg/kg)`[44] <- NaN
lab$`weight [g]`[12] <- Inf
lab$note[c(8, 50)] <- NA

write.csv2(lab, file.path(out, "r-lab-csv2.csv"), row.names = FALSE)
write_truth(lab, "r-lab-csv2.csv", paste(rver, "write.csv2"))

# Excel's "CSV UTF-8": a byte-order mark and CRLF line ends (write.csv cannot write the
# mark itself, so it is written first to the connection).
con <- file(file.path(out, "r-lab-excel.csv"), "wb")
writeBin(as.raw(c(0xEF, 0xBB, 0xBF)), con)
write.csv(lab, con, row.names = FALSE, eol = "\r\n")
close(con)
write_truth(lab, "r-lab-excel.csv", paste(rver, "write.csv with a UTF-8 byte-order mark and eol='\\r\\n'"))

# Old Excel's CSV: Latin-1, read only when the encoding is given.
write.csv2(lab, file.path(out, "r-lab-latin1.csv"), row.names = FALSE, fileEncoding = "latin1")
write_truth(lab, "r-lab-latin1.csv", paste(rver, "write.csv2 fileEncoding='latin1'"),
            options = "{\"encoding\":\"windows-1252\"}")

# As shown in a German spreadsheet: thousands dots, decimal commas, DD.MM.YYYY dates,
# timestamps to the minute... formatted by format() and written as text.
german <- lab
german$`dose (mg/kg)` <- format(lab$`dose (mg/kg)`, big.mark = ".", decimal.mark = ",", trim = TRUE)
german$`weight [g]` <- format(lab$`weight [g]`, big.mark = ".", decimal.mark = ",", trim = TRUE)
german$day <- format(lab$day, "%d.%m.%Y")
german$measured <- format(lab$measured, "%d.%m.%Y %H:%M:%S", tz = "UTC")
write.table(german, file.path(out, "r-lab-german.csv"), sep = ";", row.names = FALSE, na = "NA", qmethod = "double")
write_truth(lab, "r-lab-german.csv", paste(rver, "format(big.mark='.', decimal.mark=','), format('%d.%m.%Y'), write.table sep=';' qmethod='double'"))

# Integers in milligrams with German thousands dots and nothing else in the file to tell
# the convention by: "42.000" is 42000 only because the file is semicolon-separated.
cwmg <- data.frame(chick = as.character(cw$Chick), time = cw$Time, mg = cw$weight * 1000)
names(cwmg)[3] <- "weight (mg)"
cwmg_de <- cwmg
cwmg_de$`weight (mg)` <- format(cwmg$`weight (mg)`, big.mark = ".", decimal.mark = ",", trim = TRUE)
write.table(cwmg_de, file.path(out, "r-chickweight-mg-german.csv"), sep = ";", row.names = FALSE, qmethod = "double")
write_truth(cwmg, "r-chickweight-mg-german.csv", paste(rver, "format(big.mark='.'), write.table sep=';'"))

# write.table's default escapes a quote inside a value with a backslash, which no CSV
# reader agrees on: refused, with the way out.
write.table(lab, file.path(out, "r-lab-writetable-tab.tsv"), sep = "\t")
write_truth(lab, "r-lab-writetable-tab.tsv", paste(rver, "write.table sep='\\t'"), row_names = TRUE,
            options = "{\"refused\":\"line 4: a quote escaped with a backslash\"}")

# With write.table's defaults, a timestamp is written unquoted between spaces: two fields
# where the header has one. Refused as ragged, at the first row.
write.table(lab, file.path(out, "r-lab-writetable-space.txt"))
write_truth(lab, "r-lab-writetable-space.txt", paste(rver, "write.table"), row_names = TRUE,
            options = "{\"delimiter\":\" \",\"refused\":\"line 2: 10 fields, where the header has 8\"}")

# American dates (MM/DD/YYYY), told apart by the days above 12.
us <- lab
us$day <- format(lab$day, "%m/%d/%Y")
us$measured <- NULL
write.csv(us, file.path(out, "r-lab-us-dates.csv"), row.names = FALSE)
lab_us <- lab
lab_us$measured <- NULL
write_truth(lab_us, "r-lab-us-dates.csv", paste(rver, "format('%m/%d/%Y'), write.csv"))

# The source of a spreadsheet export (scripts/labtables.sh): Gnumeric reads this plain
# CSV in the C locale and writes it again as a German spreadsheet shows it. The timestamp
# column is left out: Gnumeric formats it as the date alone on import, and exports what it
# shows.
gn <- lab
gn$measured <- NULL
write.csv(gn, file.path(args[2], "gnumeric-source.csv"), row.names = FALSE)
write_truth(gn, "gnumeric-lab-de.csv", "Gnumeric ssconvert, in a de_DE.UTF-8 locale, of R's write.csv")
