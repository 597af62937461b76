#!/usr/bin/env bash
# fuzz.sh: each libFuzzer target of tests/fuzz (tests/fuzz/local.mk) for a
# few seconds from a small seed corpus: the option parsers of run and skew,
# the size and integer parsers, the threshold rows' checker. Any crash,
# sanitizer report or broken property fails. Skips where configure found no
# clang with libFuzzer. Longer runs: FUZZ_SECONDS=600 (see README, Tests).
set -u
dir=tests/fuzz
[ -x "$dir/fuzz_size" ] || { echo "1..0 # SKIP no libFuzzer targets (configure builds them with clang's -fsanitize=fuzzer, without CUDA: CI's build-asan)"; exit 77; }
secs=${FUZZ_SECONDS:-4}
. "$(dirname "$0")/tap.sh"

# Seeds: argument lists (a first byte 'R' (even): run, 'S' (odd): skew;
# then NUL-terminated arguments), sizes, and no rows.
mkdir -p "$tmp/options" "$tmp/size" "$tmp/emit"
seed=0
args() { { printf '%s' "$1"; shift; printf '%s\0' "$@"; } >"$tmp/options/$seed"; seed=$((seed + 1)); }
args R --backend sim --gpus 8
args R --gpus=4 --worlds 2,4 --offsets 0,4,8 --ops all_reduce,all_gather
args R --min-bytes 1K --max-bytes 4M --trials 5 --max-trials 2 --grid-factor 1.5
args R --resume=3 --db x.db --no-report --tune-skew-us 7
args R --dtypes bf16,fp32 --modes graph --seed 9 -h
args S --world 4 --shapes 4x8 --skew-delays-us 1,2 --op all_reduce --random-skew --path one_shot
args S --help
for s in 1 4K 64KiB 16M 1G 18446744073709551615 0x10 -1 "" 7MB; do printf '%s' "$s" >"$tmp/size/$seed"; seed=$((seed + 1)); done
printf '' >"$tmp/emit/0"
# Found by CI's fuzz_emit on 2026-12-03: one all_gather row of a dtype other
# than bf16 (x86-64 layout), which no lookup finds (dc_table_dtype, ee733d2).
printf '%b' \
  '\x00\x00\x00\x00\x00\x2f\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00' \
  '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x90\x00\x00\x00\x00\x01\x00\x00\x00' \
  '\x00\x00\x00\x06\xff\xff\xff\xff\xff\xff\xff\xff\x09\x00\x00\x00\x02\x00\x00\xf9\xff\xff' \
  '\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' \
  '\xff\xff\xff\xff\xff\x00\x00\x00\x02\xcd\xcd\xcd\x80\x00\xff\x00\x00\xff\xff\x2b\x00\x00' \
  '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x21\x00\xff\xff\xff\xdf\xdf\xdf\x00\x00' \
  '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xdf\x00\x00\x00\x00\x00' \
  '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xe4\xe4\xe4\xe4\x09\x09' >"$tmp/emit/1"

for t in options size emit; do
  "$dir/fuzz_$t" -max_total_time="$secs" -seed=20261130 -rss_limit_mb=2048 -close_fd_mask=3 \
    "$tmp/$t" >"$tmp/$t.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || sed -n '/ERROR\|SUMMARY\|fuzz_\|runtime error/p' "$tmp/$t.log" | head -n 20 | sed 's/^/# /'
  ok "$rc" "fuzz_$t: ${secs} s, $(sed -n 's/^#\([0-9]*\).*DONE.*/\1/p' "$tmp/$t.log" | tail -n1) runs, no crash (rc $rc)"
done

tap_end
