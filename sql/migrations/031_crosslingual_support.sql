-- 031 (issue 24): a claim in another language than the passage it cites (an English answer on a
-- Czech law) is scored by a multilingual model and judged against its own threshold
-- (answers/crosslingual.py). A support calibration records the cross-lingual threshold it fitted
-- and from how many labelled cross-lingual citations (NULL: none of both kinds, the built-in
-- default applies); every verification records the cross-lingual threshold it was judged with.
-- Every statement is idempotent.

ALTER TABLE support_calibrations ADD COLUMN IF NOT EXISTS crosslingual_threshold double precision;
ALTER TABLE support_calibrations ADD COLUMN IF NOT EXISTS crosslingual_supported integer;
ALTER TABLE support_calibrations ADD COLUMN IF NOT EXISTS crosslingual_unsupported integer;
ALTER TABLE answers ADD COLUMN IF NOT EXISTS support_crosslingual_threshold double precision;
