-- hsbloom from SQL: a table, an index on its key, a lookup that reads one file, a refresh, a drop.
--
-- Run it with pyspark's spark-sql shell and the hsbloom jar (in this checkout, after ./dev.sh build):
--
--   eval "$(.venv/bin/python -c 'import hsbloom, shlex; print(shlex.join(hsbloom.spark_sql_command()))')" \
--     -f examples/sql_quickstart.sql
--
-- or with a Spark distribution: spark-sql --driver-class-path hsbloom-spark<minor>_2.13.jar (its line's jar)
--   --conf spark.sql.extensions=hsbloom.HsbloomExtension -f examples/sql_quickstart.sql

-- A table of 16 files with a random key per row.
CREATE TABLE IF NOT EXISTS quickstart_events USING parquet AS
  SELECT xxhash64(id) AS user_id, id AS seq FROM range(0, 200000, 1, 16);

-- One Bloom filter per file over user_id; the statement returns no rows.
CREATE BLOOMFILTER INDEX IF NOT EXISTS quickstart_ids ON quickstart_events (user_id);
SHOW BLOOMFILTER INDEXES;

-- Queries use the index once hsbloom is on: the plan and the files it keeps.
SET spark.hsbloom.enabled = true;
EXPLAIN BLOOMFILTER SELECT * FROM quickstart_events WHERE user_id = xxhash64(4242L);
SELECT * FROM quickstart_events WHERE user_id = xxhash64(4242L);

-- New files: a quick refresh records them (queries read them), an incremental one indexes them.
INSERT INTO quickstart_events SELECT xxhash64(id), id FROM range(200000, 201000, 1, 2);
REFRESH BLOOMFILTER INDEX quickstart_ids QUICK;
REFRESH BLOOMFILTER INDEX quickstart_ids INCREMENTAL;
EXPLAIN BLOOMFILTER ANALYZE SELECT count(*) FROM quickstart_events WHERE user_id = xxhash64(200500L);

-- Everything about the index, and a full check of what it holds.
DESCRIBE BLOOMFILTER INDEX quickstart_ids;
VERIFY BLOOMFILTER INDEX quickstart_ids;

-- A soft delete (queries stop using it), then its data removed for good.
DROP BLOOMFILTER INDEX quickstart_ids;
VACUUM BLOOMFILTER INDEX quickstart_ids;
DROP TABLE quickstart_events;
