-- The after pass (run 3) stopped at 1635 of 1824 sizes when the device call's
-- time ran out. `tune report` pairs runs config by config, so this drops the
-- before pass's (run 1) configs that run 3 did not reach, in a copy.
DELETE FROM samples WHERE config_id IN (
  SELECT id FROM configs b WHERE b.run_id = 1 AND NOT EXISTS (
    SELECT 1 FROM configs a WHERE a.run_id = 3 AND a.impl = b.impl AND a.op = b.op AND a.path = b.path
      AND a.dtype = b.dtype AND a.world = b.world AND a.bytes = b.bytes AND a.in_offset = b.in_offset
      AND a.out_offset = b.out_offset AND a.mode = b.mode));
DELETE FROM configs WHERE id IN (
  SELECT id FROM configs b WHERE b.run_id = 1 AND NOT EXISTS (
    SELECT 1 FROM configs a WHERE a.run_id = 3 AND a.impl = b.impl AND a.op = b.op AND a.path = b.path
      AND a.dtype = b.dtype AND a.world = b.world AND a.bytes = b.bytes AND a.in_offset = b.in_offset
      AND a.out_offset = b.out_offset AND a.mode = b.mode));
