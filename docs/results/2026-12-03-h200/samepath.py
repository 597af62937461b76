#!/usr/bin/env python3
"""samepath.py REGRET.csv...: for each regret CSV (tune export --table
regret), the eager sizes up to 64 KiB where auto ran the best forced path
itself: how many, the geometric mean of auto/best, and the RMS of
ln(auto/best), the spread of one kernel measured against itself."""
import csv, math, sys
for f in sys.argv[1:]:
    r = [x for x in csv.DictReader(open(f)) if x["mode"] == "eager" and int(x["bytes"]) <= 65536
         and x["auto_path"] == x["best_path"]]
    l = [math.log(float(x["auto_ns"]) / float(x["best_ns"])) for x in r]
    print("%s: %d sizes, geomean %.4f, rms of ln ratio %.4f, above 1.03: %d" % (
        f, len(l), math.exp(sum(l) / len(l)), math.sqrt(sum(v * v for v in l) / len(l)),
        sum(v > math.log(1.03) for v in l)))
