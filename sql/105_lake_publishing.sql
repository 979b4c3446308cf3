-- Lake partitions whose publish runs on a connection of its own while the writer goes on
-- (publish-aside.ts): moved here from _lake_dirty as the publish takes its snapshot, so a load
-- that touches one meanwhile marks it dirty again. Removed once the publish is done; put back in
-- _lake_dirty when it failed, and when the writer opens the file (a process that stopped during
-- a publish), so nothing is left unpublished.
CREATE TABLE IF NOT EXISTS _lake_publishing (
  table_name  VARCHAR NOT NULL,
  part        VARCHAR NOT NULL,
  PRIMARY KEY (table_name, part)
);
