#!/usr/bin/env bash
# skew_sim.sh: `tune skew` on the sim backend. Every stored summary is what
# DESIGN's definitions give from the stored samples (per trial: max, the
# delayed rank's, the minimum, max - min and the delayed rank's measured
# delay; median, p10, p90 over trials), for a fixed rank and for a random
# one; one requested delay fits no line (its measured delays differ by
# the spin's jitter only), as the printed table says; and the report of a
# skew run left unfinished says so.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
cd "$tmp" || exit 1
common=(skew --backend sim --no-report --trials 7 --warmup 0 --mode eager --seed 11)

"$tune" "${common[@]}" --db fixed.db --world 4 --skew-rank 1 --skew-delays-us 0 20 300 \
  --shapes 8x8192 64x8192 >out 2>err
ok $? "skew, rank 1 of 4, three delays, two shapes: exit 0"
"$tune" "${common[@]}" --db random.db --world 3 --random-skew --skew-delays-us 0 20 300 >out 2>err
ok $? "skew, a random rank of 3: exit 0"

# The summaries again, from the samples, in python (numpy's linear percentile).
cat >check.py <<'PY'
import math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def pct(x, p):
    s = sorted(x); h = (len(s) - 1) * p / 100.0; k = math.floor(h)
    return s[-1] if k >= len(s) - 1 else s[k] + (h - k) * (s[k + 1] - s[k])
rows = db.execute("SELECT s.config_id, s.world, s.skew_rank, s.trials, s.requested_ns, c.skew_ns,"
                  " c.skew_rank FROM skew_summaries s JOIN configs c ON c.id = s.config_id").fetchall()
bad = []
for cid, world, rank, trials, req, cfg_ns, cfg_rank in rows:
    if req != cfg_ns or rank != cfg_rank: bad.append((cid, "requested delay or rank"))
    q = {k: [] for k in ("max", "injected", "last", "wait", "delay")}
    for t in range(trials):
        el, de = zip(*db.execute("SELECT elapsed_ns, delay_ns FROM samples WHERE config_id = ?"
                                 " AND trial = ? ORDER BY rank", (cid, t)).fetchall())
        if len(el) != world: bad.append((cid, "trial %d has %d ranks" % (t, len(el))))
        delayed = [r for r in range(world) if de[r] > 0]
        if rank >= 0 and delayed not in ([], [rank]): bad.append((cid, "delay on another rank"))
        inj = delayed[0] if len(delayed) == 1 else rank if rank >= 0 else 0
        q["max"].append(max(el)); q["injected"].append(el[inj]); q["last"].append(min(el))
        q["wait"].append(max(el) - min(el)); q["delay"].append(de[inj])
    for k, v in q.items():
        for p, name in ((50, "median"), (10, "p10"), (90, "p90")):
            got = db.execute("SELECT %s_%s_ns FROM skew_summaries WHERE config_id = ?" % (k, name),
                             (cid,)).fetchone()[0]
            if abs(got - pct(v, p)) > 1e-6 * max(1.0, abs(got)): bad.append((cid, k, name, got, pct(v, p)))
print("%d summaries, %d problems %s" % (len(rows), len(bad), bad[:3]))
sys.exit(1 if bad or not rows else 0)
PY
for db in fixed random; do
  msg=$(python3 check.py $db.db 2>&1)
  ok $? "$db: every summary is DESIGN's from the stored samples ($msg)"
done
[ "$(sqlite3 fixed.db 'SELECT count(*) FROM skew_summaries')" = 6 ] &&
  [ "$(sqlite3 fixed.db 'SELECT count(*) FROM skew_fits')" = 8 ]
ok $? "fixed: a summary per shape and delay, 4 role fits per shape"

# One requested delay: no fits, and the table says why.
"$tune" "${common[@]}" --db one.db --world 2 --skew-delays-us 50 >out 2>err
ok $? "skew with one delay: exit 0"
fits=$(sqlite3 one.db 'SELECT count(*) FROM skew_fits')
ok $(( fits != 0 )) "one delay: no fit stored ($fits)"
grep -q "No sensitivity fits: they need at least two different delays" out
ok $? "one delay: the table says there are no fits"

# Numeric knobs: the command line over the environment over the default,
# as the main job's (README); a bad value in the environment is refused.
knobs=(skew --backend sim --no-report --mode eager --skew-delays-us 0 --world 2 --impls detcoll)
TUNE_TRIALS=5 TUNE_WARMUP=2 TUNE_SEED=9 "$tune" "${knobs[@]}" --db env.db >out 2>err
ok $? "skew under TUNE_TRIALS=5 TUNE_WARMUP=2 TUNE_SEED=9: exit 0"
test "$(sqlite3 env.db "select trials || ' ' || warmup from configs; select seed from runs")" = "5 2
9"
ok $? "it takes 5 trials, 2 warm-up calls and seed 9 from the environment"
TUNE_TRIALS=5 "$tune" "${knobs[@]}" --trials 6 --db cli.db >out 2>err
test "$(sqlite3 cli.db "select trials from configs")" = 6
ok $? "--trials 6 wins over TUNE_TRIALS=5"
"$tune" "${knobs[@]}" --db def.db >out 2>err
test "$(sqlite3 def.db "select trials || ' ' || warmup from configs; select seed from runs")" = "50 10
1"
ok $? "without either: skew's defaults, 50 trials, 10 warm-up calls, seed 1"
TUNE_TRIALS=2 "$tune" "${knobs[@]}" --db bad.db >out 2>err
rc=$?
ok $(( rc != 2 || $(test -e bad.db; echo $?) == 0 )) "TUNE_TRIALS=2 is refused, exit 2, no database (rc $rc)"
grep -q "TUNE_TRIALS='2' is not a number in 3..100000" err
ok $? "it names the variable and the range: $(head -n1 err)"

# A skew run left unfinished (killed) is drawn with a note saying so.
cp fixed.db cut.db
sqlite3 cut.db "UPDATE runs SET finished_at = NULL WHERE kind = 'skew'"
"$tune" report --db cut.db --out rep >out 2>err
ok $? "a report of an unfinished skew run: exit 0"
grep -q "^> \*\*UNFINISHED RUN.\*\* skew run 1 has not finished" rep/report.md
ok $? "it says the skew run has not finished"
"$tune" report --db fixed.db --out rep2 >out 2>err && ! grep -q UNFINISHED rep2/report.md
ok $? "and a finished one has no such note"

# The table auto dispatch followed: DC_THRESHOLDS_FILE's, recorded as such
# (a review: skew recorded the compiled-in table's provenance).
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >rows.h
DC_THRESHOLDS_FILE=$tmp/rows.h "$tune" skew --backend sim --trials 3 --warmup 0 --mode eager --dtype fp32 \
  --shapes 1x512 --skew-delays-us 0 50 --no-report --db th.db >out 2>err
ok $? "skew under DC_THRESHOLDS_FILE"
sqlite3 th.db "select thresholds from runs" | grep -q "^DC_THRESHOLDS_FILE $tmp/rows.h (table [0-9a-f]*)$"
ok $? "its run records that table: $(sqlite3 th.db 'select thresholds from runs')"
# Stopped (SIGINT, here while the sim holds it): it died of the signal,
# leaving the database in WAL mode with its -wal and -shm (a review). It
# says what it committed, exits 130, and leaves the database one file.
TUNE_SIM_PAUSE_AFTER=2 "$tune" skew --backend sim --trials 3 --warmup 0 --mode eager --path one_shot \
  --skew-delays-us 0 50 100 --no-report --db int.db >out 2>err &
spid=$!
for _ in $(seq 200); do [ -s int.db ] && sleep 0.3 && break; sleep 0.05; done
kill -INT $spid
wait $spid
rc=$?
[ $rc -eq 130 ] && grep -q "tune skew: interrupted by SIGINT: what it measured is committed to int.db as skew run 1" err &&
  [ ! -e int.db-wal ] && [ "$(sqlite3 int.db "select count(*) from runs where finished_at is null")" = 1 ]
ok $? "SIGINT: exit 130, said so, the run unfinished, no -wal left (rc $rc): $(tail -n1 err)"

tap_end
