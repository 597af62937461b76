#!/usr/bin/env bash
# barrier.sh: the eager figures of the four fp32-only eager jobs of call13
# (E1 and E4 with c111d37's pthread barrier, E2 and E3 with e103c4c's
# spinning one, run in that order in one device call), from their sweep
# runs (run 2): configs at most 64 KiB, and 1 to 16 MiB per rank (the
# trimmed databases hold those configs and their samples only). Needs
# sqlite3. Run here: bash barrier.sh > barrier.txt
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "job|configs|mean median ns|mean (p90-p10)/median  -- eager, <= 64 KiB"
for n in E1-oldbar E2-new E3-new E4-oldbar; do
  gunzip -c $n-trimmed.db.gz > "$tmp/$n.db"
  sqlite3 "$tmp/$n.db" "select '$n', count(*), printf('%.0f', avg(median_ns)), printf('%.3f', avg((p90_ns-p10_ns)/median_ns)) from configs where mode='eager' and bytes<=65536 and run_id=2"
done
echo "job|configs|mean median ns|mean (p90-p10)/median  -- eager, 1 to 16 MiB"
for n in E1-oldbar E2-new E3-new E4-oldbar; do
  sqlite3 "$tmp/$n.db" "select '$n', count(*), printf('%.0f', avg(median_ns)), printf('%.3f', avg((p90_ns-p10_ns)/median_ns)) from configs where mode='eager' and bytes>=1048576 and bytes<=16777216 and run_id=2"
done
echo "job|trials|mean |rank 0 - rank 1| ns|share of trials with both ranks equal|mean slowest ns  -- eager, <= 64 KiB"
for n in E1-oldbar E2-new E3-new E4-oldbar; do
  sqlite3 "$tmp/$n.db" "with p as (select s.config_id, s.trial, max(s.elapsed_ns)-min(s.elapsed_ns) d, max(s.elapsed_ns) mx from samples s join configs c on c.id=s.config_id where c.mode='eager' and c.bytes<=65536 and c.run_id=2 group by s.config_id, s.trial) select '$n', count(*), printf('%.0f', avg(d)), printf('%.3f', sum(d=0)*1.0/count(*)), printf('%.0f',avg(mx)) from p"
done
