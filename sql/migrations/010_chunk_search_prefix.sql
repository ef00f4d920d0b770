-- Issue 8: a chunk's model input is its document's identity line and section path followed by
-- its text. The part before the text is stored as embedded, so `show` lets an auditor see
-- exactly what was embedded and indexed. NULL: a chunk from before this was recorded.
ALTER TABLE chunks ADD COLUMN search_prefix text;
