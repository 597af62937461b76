#!/usr/bin/env bash
# device_run.sh BUILD OUT [bench args...]: on a GPU machine, from the
# repository root and a build (tests/device_build.sh there, or configure
# --disable-shared and `make all check TESTS=` elsewhere), runs every GPU and
# MPI test, compute-sanitizer (through gpu_sanitize) and, unless
# TUNE_NO_BENCH is set, the bench for worlds 2, 4 and 8, and writes the logs
# and a summary under OUT.
set -u
build=${1:?usage: device_run.sh BUILD OUT}
out=${2:?usage: device_run.sh BUILD OUT}
shift 2
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -srm
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  nvcc --version 2>/dev/null | tail -1
} >"$out/env.txt" 2>&1

pass=0 fail=0 skip=0
: >"$out/gpu-tests.log"
# Scripts find the built tune (and its neighbours) through TUNE_BIN, as under make check.
export TUNE_BIN=$build/src/tune TUNE_SRCDIR=$PWD
# NAME@pdl: the test NAME again with DC_PDL=1 (programmatic dependent launch).
for t in gpu_paths gpu_auto gpu_graph gpu_errors gpu_delay gpu_random gpu_ipc gpu_sanitize gpu_table gpu_backend \
  gpu_fold mpi_backend.sh gpu_skew.sh gpu_tune.sh gpu_mpi_tune.sh gpu_first_call.sh gpu_graph@pdl gpu_random@pdl \
  gpu_sanitize@pdl; do
  start=$(date +%s%N)
  pdl=0 prog=${t%@pdl}
  [ "$prog" != "$t" ] && pdl=1
  case $t in
    *.sh) DC_PDL=$pdl tests/$prog >"$out/$t.log" 2>&1 ;;
    *) DC_PDL=$pdl "$build/tests/$prog" >"$out/$t.log" 2>&1 ;;
  esac
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  case $rc in
    0) pass=$((pass + 1)); verdict=PASS ;;
    77) skip=$((skip + 1)); verdict=SKIP ;;
    *) fail=$((fail + 1)); verdict="FAIL ($rc)" ;;
  esac
  checks=$(grep -c '^ok ' "$out/$t.log")
  notok=$(grep -c '^not ok ' "$out/$t.log")
  printf '%-14s %-9s %4d ok %3d not ok  %6.1f s\n' "$t" "$verdict" "$checks" "$notok" "$secs" | tee -a "$out/summary.txt"
  { echo "===== $t: $verdict"; cat "$out/$t.log"; } >>"$out/gpu-tests.log"
  rm -f "$out/$t.log"
done
echo "gpu tests: $pass passed, $fail failed, $skip skipped" | tee -a "$out/summary.txt"

[ -n "${TUNE_NO_BENCH:-}" ] && exit $((fail != 0))
: >"$out/bench.txt"
# One GPU per rank where there are enough (and the peer copy rates first),
# virtual ranks on GPU 0 otherwise: bench_detcoll chooses.
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
for w in 2 4 8; do
  p2p=()
  [ "$w" = 2 ] && [ "$ngpu" -ge 2 ] && p2p=(--p2p)
  "$build/kernels/bench_detcoll" --world "$w" --mode both "${p2p[@]}" "$@" >>"$out/bench.txt" 2>&1 ||
    echo "bench world $w failed: $?" | tee -a "$out/summary.txt"
done
exit $((fail != 0))
