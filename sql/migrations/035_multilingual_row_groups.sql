-- 035 (issue 21, item 2, for 034's table): a multilingual vector carries its chunk's groups and
-- version, and the reader's policy tests them on the row itself, as 028 made chunks' policy do.
--
-- 034's policy asked, for every row a reader's statement touched, "is my chunk visible?" (an
-- EXISTS on chunks under chunks' own policy). The planner ran it as one hashed set of every
-- chunk the caller may see, built before the first row: at 100,000 chunks with 30% of them
-- multilingual, 120 ms of a broad caller's hybrid search went into hashing 110,000 chunk ids to
-- read the 54 rows the index walk needed (bench_search_scale.py --multilingual 0.3: hybrid +
-- rerank p50 206 ms against 49 ms without the list). It grew with the corpus.
--
-- A chunk's groups and version never change (an access change stages a new version with new
-- chunks), so copying them is exact. They are set by a trigger from the chunk, whatever the insert
-- said, so no writer can give a vector other groups than its chunk's. The rule is chunks' own:
-- the row's groups meet the caller's, and no exception the caller's groups leave standing
-- (reader_exceptions, read once per statement as a hashed set whose size grows with unpublished,
-- deleted and narrowed history, never with the corpus). Every statement is idempotent.

ALTER TABLE chunk_multilingual ADD COLUMN IF NOT EXISTS acl_groups text[];
ALTER TABLE chunk_multilingual ADD COLUMN IF NOT EXISTS version_id bigint;

CREATE OR REPLACE FUNCTION rag_multilingual_groups() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    SELECT c.acl_groups, c.version_id INTO NEW.acl_groups, NEW.version_id FROM chunks c WHERE c.id = NEW.chunk_id;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION rag_multilingual_groups() FROM PUBLIC;
DROP TRIGGER IF EXISTS chunk_multilingual_groups_of_chunk ON chunk_multilingual;
CREATE TRIGGER chunk_multilingual_groups_of_chunk BEFORE INSERT ON chunk_multilingual
    FOR EACH ROW EXECUTE FUNCTION rag_multilingual_groups();

-- Rows written under 034: filled in once, here.
UPDATE chunk_multilingual x SET acl_groups = c.acl_groups, version_id = c.version_id
FROM chunks c WHERE c.id = x.chunk_id AND (x.acl_groups IS NULL OR x.version_id IS NULL);
ALTER TABLE chunk_multilingual ALTER COLUMN acl_groups SET NOT NULL;
ALTER TABLE chunk_multilingual ALTER COLUMN version_id SET NOT NULL;

DROP POLICY IF EXISTS reader_groups ON chunk_multilingual;
CREATE POLICY reader_groups ON chunk_multilingual FOR SELECT TO rag_reader
    USING (acl_groups && (SELECT rag_session_groups())
           AND NOT (version_id = ANY (SELECT e.version_id FROM reader_exceptions e
                                      WHERE NOT (e.readable_by && (SELECT rag_session_groups())))));

-- The same trap in a migrated index (023): a search of a model that a switch made the index's
-- walks the chunks' HNSW index for the chunks staged under it, which right after the switch are
-- none, so the walk visited its tuple limit among the old model's chunks (230 ms at 100,000
-- chunks, as the superuser too). A search now counts them first (store/vector_plan.py), through
-- the versions' model: this index makes that count a lookup, not a scan of every version.
CREATE INDEX IF NOT EXISTS document_versions_model ON document_versions (model_id);
