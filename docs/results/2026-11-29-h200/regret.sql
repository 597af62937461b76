-- regret.sql: the after pass's regret table, by op, world and mode; then
-- totals, sizes where auto chose the best path (the same kernel measured
-- twice: the noise floor) or another one, and the largest regrets.
-- Usage (in a result folder): gunzip -c tune-nosamples.db.gz >t.db && sqlite3 t.db <../regret.sql
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
SELECT op, world, mode, align, dtype, bytes, auto_path, best_path, round(regret, 3) AS regret
FROM regret ORDER BY regret DESC LIMIT 15;
