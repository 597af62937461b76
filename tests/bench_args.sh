#!/usr/bin/env bash
# bench_args.sh: bench_detcoll's command line (kernels/bench_opts.c), checked
# without a GPU through tests/bench_args: nccl-tests' -b/-e/-f/-g make the
# sizes and world they make in all_reduce_perf, -n/-w/-c/-d the trials,
# check and dtype, --help lists them, and every bad value exits 2 with a
# message naming it: a repeated option or list item, -b/-e without -f, an
# option that counts for nothing, and a run that would measure nothing.
set -u
. "$(dirname "$0")/tap.sh"
args=$(dirname "$tune")/../tests/bench_args
cd "$tmp" || exit 1

"$args" --help >out 2>&1
ok $? "--help exits 0"
for o in "-b, --minbytes" "-e, --maxbytes" "-f, --stepfactor" "-g, --world" "--sizes" \
  "-n, --iters" "-w, --warmup" "-c, --check" "-d, --dtype"; do
  grep -q -- "^ *$o " out
  ok $? "--help lists $o"
done

same() {
  local want=$1
  shift
  "$args" "$@" >out 2>err
  ok $? "exit 0 for: $*"
  grep -qx -- "$want" out
  ok $? "$*: $want (got: $(tr '\n' ' ' <out))"
}
same "sizes 1024 4096 16384 65536 262144 1048576 4194304 16777216 67108864 268435456"
same "sizes 8 16 32 64 128" -b 8 -e 128 -f 2
same "sizes 1048576" -b 1M -e 1M
same "sizes 1024 8192 65536" -e 64K -f 8
same "world 2" -g 2
same "sizes 1024 65536" --minbytes 1K --maxbytes 100K --stepfactor 64
same "sizes 1024 2048" --sizes 1K,2K
same "sizes 1024 2097152 1073741824 64" --sizes 1KiB,2MB,1gib,64B
same "offset 0"
same "offset 6" --offset 6
same "offset 8" --offset 8 --dtype fp32
same "trials 100 10"
same "trials 500 0" -n 500 -w 0
same "trials 200 3" --iters 200 --warmup 3
same "check 1"
same "check 0" -c 0
same "dtype bf16"
for d in "bfloat16 bf16" "half fp16" "float fp32" "fp16 fp16"; do
  same "dtype ${d#* }" -d "${d% *}"
done

bad() {
  local want=$1
  shift
  "$args" "$@" >out 2>err
  local rc=$?
  ok $(( rc != 2 )) "exit 2 for: $*  (got $rc)"
  grep -q -- "$want" err
  ok $? "message '$want' for: $*: $(head -n1 err)"
}
bad "-b 'x': not a size" -b x
bad "-b '1Ki': not a size (digits with an optional K, M or G, or KiB, MiB, GiB)" -b 1Ki
bad "-b '4iB': not a size" -b 4iB
bad "--sizes '2.9': not a size (digits" --sizes 2.9
bad "-b '0x400': not a size (digits" -b 0x400
bad "-e '1e3': not a size (digits" -e 1e3
bad "-b '-1': not a size" -b -1
bad "-e '65G': out of range (1 byte .. 64G)" -e 65G
bad "-e '0': out of range" -e 0
bad "-f '1': out of range (2..1024)" -f 1
bad "-f '2.5': not an integer" -f 2.5
bad "-g '9': out of range" -g 9
bad "-g '0': out of range" -g 0
bad "-b 1048576 is larger than -e 1024" -b 1M -e 1K
bad "--sizes and -b/-e/-f exclude each other" --sizes 1K -f 2
same "sizes $(for i in $(seq 0 36); do printf ' %d' $((1 << i)); done | cut -c2-)" -b 1 -e 64G -f 2
bad "-b needs a value" -b
bad "--offset 3: not a whole number of bf16 elements" --offset 3
bad "--offset 6: not a whole number of fp32 elements" --dtype fp32 --offset 6
bad "--offset '4097': out of range" --offset 4097
bad "unknown option '-x'" -x
bad "-n '20': out of range (100..1000000)" -n 20
bad "-w '-1': out of range (0..1000000)" -w -1
# One value per option, each list item once and none empty, -b/-e with -f
# (nccl-tests steps by a fixed -i without it), options that count.
bad "--world (-g) given twice" -g 2 -g 4
bad "--world (-g) given twice" -g 2 --world 8
bad "--sizes given twice" --sizes 1K --sizes 2K
bad "--op given twice" --op all_reduce --op all_gather
bad "--sizes ',,1K,,': an empty item" --sizes ,,1K,,
bad "--sizes '1K,1024': a size given twice" --sizes 1K,1024
bad "--impl 'detcoll,': an empty item" --impl detcoll,
bad "--impl 'detcoll,detcoll': an item given twice" --impl detcoll,detcoll
bad "--paths ',direct': an empty item" --paths ,direct
bad "--paths 'direct,auto,direct': an item given twice" --paths direct,auto,direct
bad "--paths 'auto,all': all goes alone" --paths auto,all
bad "-b/-e without -f: nccl-tests would step by a fixed increment (-i)" -b 8 -e 128M
bad "-b/-e without -f" -e 64K
bad "--p2p-size '100': not a multiple of 16 bytes" --p2p --p2p-size 100
bad "--p2p-size is for --p2p" --p2p-size 1M
bad "--graph-calls is for graph mode" --mode eager --graph-calls 7
bad "--out '': an empty path" --out ''
bad "--out '.': a folder, not a file" --out .
bad "--out 'no/such/t.txt': not writable, or its folder does not exist" --out no/such/t.txt
same "sizes 4096 1024" --sizes 4K,1K
# tune's database, by its name, a link or its -wal's name: the table
# replaced the database (a review, on a GPU, exit 0).
"$tune" --backend sim --gpus 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 --no-reg \
  --max-bytes 4K --trials 3 --max-trials 3 --no-report --db t.db >/dev/null 2>&1 && ln -sf t.db lnk.txt
ok $? "a tune database"
sum=$(cksum <t.db)
bad "--out 't.db': it is an SQLite database" --out t.db
bad "--out 'lnk.txt': it is an SQLite database" --out lnk.txt
bad "--out 't.db-wal': it is the -wal, -shm or -journal file" --out t.db-wal
test "$(cksum <t.db)" = "$sum"
ok $? "the database as it was"
"$args" --out /dev/null >out 2>err
ok $? "--out /dev/null (a writable file in a folder that takes none): taken $(head -n1 err)"
# bench_detcoll itself, where a run would measure nothing: refused (exit
# 2) before it looks for a GPU (exit 77 here without one).
bench=$(dirname "$tune")/../kernels/bench_detcoll
if [ -x "$bench" ]; then
  nothing() {
    "$bench" "$@" >out 2>err
    local rc=$?
    ok $(( rc != 2 )) "bench_detcoll $*: exit 2 (got $rc)"
    grep -q "nothing to measure" err
    ok $? "... saying so: $(head -n1 err)"
  }
  nothing -g 2 --op all_reduce --impl detcoll --paths copy_engine
  nothing -g 2 --impl detcoll --paths direct,auto_reg --offset 8
  nothing -g 2 --op all_gather --impl detcoll --paths push --sizes 256M
  "$bench" -g 2 --impl detcoll --paths direct,one_shot --offset 8 >out 2>err
  rc=$?
  ok $(( rc == 2 )) "bench_detcoll with one path left to measure goes on to the GPU (exit $rc: $(head -n1 err))"
fi
bad "-c '2': out of range (0..1)" -c 2
bad "-d 'double': not bf16, fp16 or fp32 (nccl-tests: bfloat16, half or float)" -d double

tap_end
