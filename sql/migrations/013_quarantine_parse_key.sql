-- Issue 12: a file the parser refused is not parsed again while nothing its failure depends on
-- has changed. parse_key records those things at the time of the failure (the project and
-- parser version for the file's kind, the parse limits; rag_pipeline/sync/parse_key.py); NULL
-- for failures that may pass on a retry (a read error, a file gone since the listing).
ALTER TABLE quarantine ADD COLUMN parse_key text;
