-- 038 (issue 21): what a search reads of every chunk it considers stays in the chunk's row.
--
-- PostgreSQL moves a row's values out of line (TOAST) once the row passes 2 kB, and pgvector's
-- types are EXTERNAL by default: a chunk's row (about 3.9 kB: text, tsvector, 1.5 kB of vector,
-- 0.5 kB of BM25 weights) had its vector in the TOAST table, so every distance a search computed
-- cost a TOAST index probe and a second heap read. A selective caller's exact scan reads all its
-- chunks' vectors: 10,000 of them took 30 ms out of line and 14 ms in the row (at 1,000,000
-- chunks a 1% caller scans 10,000).
--
-- Keeping the vector in the row (MAIN) is not enough on its own: with the row still over 2 kB,
-- PostgreSQL then moves every other movable value out, down to the chunk's groups, which the
-- reader's row policy tests on every full-text candidate (four more buffers a row: a broad
-- caller's full text went from 24 to 30 ms at the median, bench/README.md, session 34). So rows
-- are kept whole up to half a page (toast_tuple_target): a chunk of ordinary size stays in one
-- row, a long one has its text and tsvector compressed or moved out first; the vector, the
-- weights and the groups are MAIN, moved out only if the row could not fit a page otherwise.
--
-- The settings apply to rows written from now on (every sync's new chunks). Rows written before
-- take them when the table is rewritten (`VACUUM FULL chunks`, which also rebuilds its indexes:
-- minutes at a million chunks), which a migration inside a transaction cannot do.
--
-- The vectors of a migrated model (model_vectors) and the multilingual ones (chunk_multilingual)
-- sit in narrow rows that fit 2 kB at 384 dimensions; a model of 768 or more would push them, and
-- their groups, out of line: the same settings keep them in.
ALTER TABLE chunks SET (toast_tuple_target = 4080);
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN, ALTER COLUMN bm25 SET STORAGE MAIN,
    ALTER COLUMN acl_groups SET STORAGE MAIN;
ALTER TABLE model_vectors SET (toast_tuple_target = 4080);
ALTER TABLE model_vectors ALTER COLUMN embedding SET STORAGE MAIN, ALTER COLUMN acl_groups SET STORAGE MAIN;
ALTER TABLE chunk_multilingual SET (toast_tuple_target = 4080);
ALTER TABLE chunk_multilingual ALTER COLUMN embedding SET STORAGE MAIN, ALTER COLUMN acl_groups SET STORAGE MAIN;
