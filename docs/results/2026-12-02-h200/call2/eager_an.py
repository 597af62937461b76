#!/usr/bin/env python3
"""eager_an.py A.db B.db: per job, the regret (after pass) by mode, how many
trials the after pass gave each auto config (it doubles them, up to
--max-trials, while auto against 1.03 x the best path is undecided), and each
size above 1.03 with its trial count and whether auto ran the best path
itself."""
import sqlite3, sys
for name in sys.argv[1:]:
    db = sqlite3.connect(name)
    after = db.execute("select max(id) from runs where kind = 'after'").fetchone()[0]
    print(f"{name} (after run {after})")
    for mode in ("graph", "eager"):
        n, ok, mx = db.execute("select count(*), sum(auto_ns <= 1.03 * best_ns), max(auto_ns / best_ns) "
                               "from regret where run_id = ? and mode = ?", (after, mode)).fetchone()
        tr = db.execute("select trials, count(*) from configs where run_id = ? and mode = ? and path = 'auto' "
                        "and impl in ('detcoll', 'detcoll_reg') group by trials", (after, mode)).fetchall()
        print(f"  {mode}: regret <= 1.03 at {ok} of {n}, max {mx:.3f}; auto configs by trials: "
              + ", ".join(f"{t}: {c}" for t, c in tr))
    for op, dt, al, mo, by, ap, bp, an, bn in db.execute(
            "select op, dtype, align, mode, bytes, auto_path, best_path, auto_ns, best_ns from regret "
            "where run_id = ? and auto_ns > 1.03 * best_ns order by mode, op, bytes", (after,)):
        impl = "detcoll_reg" if al == "reg16" else "detcoll"
        off = 4 if al == "unaligned" else 0
        t = db.execute("select trials from configs where run_id = ? and impl = ? and op = ? and dtype = ? and "
                       "mode = ? and bytes = ? and in_offset = ? and path = 'auto' and skew_ns = 0",
                       (after, impl, op, dt, mo, by, off)).fetchone()
        print(f"    {op:14s} {dt} {al:9s} {mo} {by:>9d}: {an / bn:.3f} auto {ap} best {bp}"
              f"{' (the same path)' if ap == bp else ''}, {t[0] if t else '?'} trials")
