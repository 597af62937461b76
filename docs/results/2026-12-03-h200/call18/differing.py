#!/usr/bin/env python3
"""The sweep medians behind a row where two chained jobs' headers differ:
differing.py OP DTYPE ALIGN MODE LO HI PATHS DB... prints, per database,
every sweep configuration of that row with LO <= bytes <= HI and a path in
PATHS (comma list): bytes, path, median and p10/p90 of the slowest rank (ns),
trials. The databases are the jobs' tune.db (not kept: the call's $OUT had
them as <job>.db.gz)."""
import sqlite3
import sys

op, dtype, align, mode, lo, hi, paths = sys.argv[1:8]
paths = paths.split(",")
for db in sys.argv[8:]:
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    print(f"# {db}: {op} {dtype} {align} {mode}, sweep, {lo}..{hi} bytes")
    print("bytes,path,median_ns,p10_ns,p90_ns,trials")
    q = """select c.bytes, c.path, c.median_ns, c.p10_ns, c.p90_ns, c.trials
           from configs c join runs r on r.id = c.run_id
           where r.kind = 'sweep' and c.op = ? and c.dtype = ? and c.align = ? and c.mode = ?
             and c.skew_ns = 0 and c.bytes between ? and ? order by c.bytes, c.path"""
    for b, p, m, p10, p90, t in c.execute(q, (op, dtype, align, mode, int(lo), int(hi))):
        if p in paths:
            print(f"{b},{p},{m:.0f},{p10:.0f},{p90:.0f},{t}")
