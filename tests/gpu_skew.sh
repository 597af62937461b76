#!/usr/bin/env bash
# gpu_skew.sh: tune skew on a GPU with 2 virtual ranks: the measured delay
# is within 1% of the requested one at 10 us and above, and max - last (the
# time the other rank spent waiting) tracks the injected delay within 5% at
# 250 us and 1 ms, in eager and graph mode. Prints the figures. Skips (77)
# without a GPU.
set -u
tune=${TUNE_BIN:?TUNE_BIN is set by the harness}
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "1..0 # SKIP no GPU (/dev/nvidia[0-9]*)"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 is needed to read the JSON"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$tune" skew --backend gpu --virtual-ranks --world 2 --op all_reduce --shapes 8x8192 \
  --dtype bf16 --skew-delays-us 0 10 50 250 1000 --skew-rank 1 --mode both \
  --impls detcoll --trials 50 --warmup 10 --seed 5 \
  --db "$tmp/skew.db" --json "$tmp/skew.json" --no-report >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out"
if [ "$rc" -ne 0 ]; then
  sed 's/^/# /' "$tmp/err"
  echo "not ok 1 - tune skew exits 0 (rc $rc)"
  echo "1..1"
  exit 1
fi

python3 - "$tmp/skew.json" <<'PY'
import json, sys

d = json.load(open(sys.argv[1]))
n = failed = 0

def ok(cond, what):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok"), n, "-", what)
    failed += not cond

ok(True, "tune skew exits 0")
s = d["summaries"]
ok(len(s) == 10, "10 summaries: 5 delays x 2 modes (got %d)" % len(s))
for x in s:
    req = x["requested_ns"]
    dm, d10, d90 = (x["delay"][k] for k in ("median_ns", "p10_ns", "p90_ns"))
    tag = "%s %s %.0f us" % (x["impl"], x["mode"], req / 1e3)
    if req >= 10000:
        ok(all(abs(v - req) <= 0.01 * req for v in (dm, d10, d90)),
           "%s: measured delay %.2f us [p10 %.2f, p90 %.2f] within 1%% of requested"
           % (tag, dm / 1e3, d10 / 1e3, d90 / 1e3))
    else:
        ok(dm == 0, "%s: no delay measured without one (%.0f ns)" % (tag, dm))
    if req >= 250000:
        w = x["wait"]["median_ns"]
        ok(abs(w - dm) <= 0.05 * dm,
           "%s: max - last %.2f us tracks the measured delay %.2f us within 5%% (%.2f%%)"
           % (tag, w / 1e3, dm / 1e3, 100 * (w - dm) / dm))
        ok(x["injected"]["median_ns"] < x["max"]["median_ns"] - 0.5 * req,
           "%s: the delayed rank waits less (injected %.2f us, max %.2f us, last %.2f us)"
           % (tag, x["injected"]["median_ns"] / 1e3, x["max"]["median_ns"] / 1e3,
              x["last"]["median_ns"] / 1e3))
for f in d["fits"]:
    if f["role"] == "wait":
        ok(0.95 <= f["slope"] <= 1.05,
           "%s %s: wait slope %.4f [%.4f, %.4f], intercept %.2f us, r2 %.4f"
           % (f["impl"], f["mode"], f["slope"], f["slope_lo"], f["slope_hi"],
              f["intercept_ns"] / 1e3, f["r2"]))
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
