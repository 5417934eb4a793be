"""Writes lab tables the way pandas users export them, and beside each its truth: the
DataFrame's values as pandas holds them, dumped by Python itself. The frames are built from
R's dumps of its own datasets (the *.truth.json labtables.R wrote), so the values are R's
and the files are pandas'. Run by scripts/labtables.sh (`make lab-tables`).

Usage: python3 labtables.py OUTDIR   (Debian's /usr/bin/python3 with python3-pandas)
"""
import datetime
import json
import math
import os
import sys

import pandas as pd

out = sys.argv[1]


def frame(truth_file):
    """A DataFrame of an R dump: classes mapped to pandas dtypes, NA to NaN/None."""
    with open(os.path.join(out, truth_file), encoding="utf-8") as f:
        truth = json.load(f)
    cols = {}
    for c in truth["columns"]:
        vals, cls = c["values"], c["class"]
        if cls == "integer" and None not in vals:
            cols[c["name"]] = pd.Series(vals, dtype="int64")
        elif cls in ("integer", "numeric"):
            cols[c["name"]] = pd.Series([float(v) if v is not None else math.nan for v in vals], dtype="float64")
        elif cls == "logical":
            cols[c["name"]] = pd.Series(vals, dtype="object")
        elif cls == "Date":
            cols[c["name"]] = pd.Series([datetime.date.fromisoformat(v) if v else None for v in vals], dtype="object")
        elif cls == "POSIXct":
            cols[c["name"]] = pd.to_datetime(pd.Series(vals))
        else:
            cols[c["name"]] = pd.Series(vals, dtype="object")
    return pd.DataFrame(cols)


def value(v):
    if v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    return v


def klass(series):
    """The column's class in the truths' vocabulary (R's), from what pandas holds."""
    kind = series.dtype.kind
    if kind == "i":
        return "integer"
    if kind == "f":
        return "numeric"
    if kind == "b":
        return "logical"
    if kind == "M":
        return "POSIXct"
    held = [v for v in series if value(v) is not None]
    if held and all(isinstance(v, bool) for v in held):
        return "logical"
    if held and all(isinstance(v, datetime.date) for v in held):
        return "Date"
    return "character"


def write(df, name, maker, **to_csv):
    df.to_csv(os.path.join(out, name), index=False, **to_csv)
    truth = {
        "file": name,
        "maker": "pandas %s DataFrame.to_csv(%s)" % (pd.__version__, ", ".join("%s=%r" % kv for kv in sorted(to_csv.items()))),
        "options": {},
        "rows": len(df),
        "columns": [
            {"name": col, "class": klass(df[col]), "dtype": str(df[col].dtype), "values": [value(v) for v in df[col]]}
            for col in df.columns
        ],
    }
    base = name.rsplit(".", 1)[0]
    with open(os.path.join(out, base + ".truth.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, ensure_ascii=False)
        f.write("\n")


lab = frame("r-lab-csv2.truth.json")
aq = frame("r-airquality-csv2.truth.json")

# Europe's CSV: semicolons, decimal commas, NA, German timestamps (the dates as midnight).
german = lab.copy()
german["day"] = pd.to_datetime(german["day"])
write(german, "py-lab-semicolon.csv", "pandas", sep=";", decimal=",", na_rep="NA", date_format="%d.%m.%Y %H:%M:%S")

# Dates kept as dates (written ISO) and timestamps day first with slashes, to the minute.
write(lab, "py-lab-dayfirst.csv", "pandas", date_format="%d/%m/%Y %H:%M")

# Excel's "CSV UTF-8" from pandas: a byte-order mark and CRLF; airquality's integer
# columns with NaN are floats in pandas and written "41.0", its missing values empty.
write(aq, "py-airquality-excel.csv", "pandas", encoding="utf-8-sig", lineterminator="\r\n")

# Tab-separated with pandas' defaults: NaN written empty.
write(lab, "py-lab.tsv", "pandas", sep="\t")

# JSON lines, as pandas writes them for other tools: only checked by the reader (each line
# an object) and counted; the sandbox reads their columns.
lab.to_json(os.path.join(out, "py-lab.jsonl"), orient="records", lines=True, date_format="iso", force_ascii=False)
with open(os.path.join(out, "py-lab-jsonl.truth.json"), "w", encoding="utf-8") as f:
    json.dump({"file": "py-lab.jsonl", "maker": "pandas %s DataFrame.to_json(orient='records', lines=True)" % pd.__version__,
               "options": {}, "rows": len(lab), "columns": []}, f)
    f.write("\n")
