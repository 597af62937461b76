-- regret.sql: the after pass's regret table, by op, world and mode; then
-- totals, sizes where auto chose the best path (the same kernel measured
-- twice: the noise floor) or another one, and every size over 1.03 with
-- the trials the after pass gave it: it adds trials while the bootstrap CI
-- of median(auto) - 1.03 x median(best) straddles zero, up to --max-trials
-- (160), so fewer trials than that mean the size was decided.
-- Usage, in a result folder: gunzip -c tune-A-trimmed.db.gz >t.db && sqlite3 t.db <../regret.sql
-- (or any database of a main job: the after run is the one with regret rows)
.mode markdown
.headers on
SELECT op, world, mode, count(*) AS sizes, round(avg(regret), 3) AS mean, round(max(regret), 3) AS max,
       sum(regret <= 1.03) AS "at most 1.03", sum(auto_path != best_path) AS "auto != best"
FROM regret GROUP BY op, world, mode ORDER BY op, world, mode;
SELECT mode, count(*) AS sizes, sum(regret <= 1.03) AS "at most 1.03", round(max(regret), 3) AS max
FROM regret GROUP BY mode
UNION ALL SELECT 'all', count(*), sum(regret <= 1.03), round(max(regret), 3) FROM regret;
SELECT CASE WHEN auto_path = best_path THEN 'auto = best (same kernel)' ELSE 'auto != best' END AS "path",
       count(*) AS sizes, sum(regret <= 1.03) AS "at most 1.03", round(min(regret), 3) AS min,
       round(max(regret), 3) AS max
FROM regret GROUP BY auto_path = best_path;
SELECT r.op, r.world, r.mode, r.align, r.dtype, r.bytes, r.auto_path, r.best_path,
       round(r.regret, 3) AS regret, c.trials AS "trials (auto)"
FROM regret r JOIN configs c
  ON c.run_id = r.run_id AND c.impl = 'detcoll' AND c.path = 'auto' AND c.op = r.op
 AND c.dtype = r.dtype AND c.world = r.world AND c.mode = r.mode AND c.bytes = r.bytes
 AND (c.in_offset = 0) = (r.align = 'align16')
WHERE r.regret > 1.03 ORDER BY r.regret DESC;
