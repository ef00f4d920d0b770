-- 021 (issue 24): the support score gains a polarity flag (a negation in the claim or in the
-- passage sentence it matches best, not in both; answers/polarity.py) that lowers the score by a
-- calibrated weight, and its similarity is now the best of the chunk and its sentences. A support
-- calibration records the polarity weight it fitted; one without it (NULL: calibrated before this
-- migration, on the old score) is not applied: `calibrate-support` must run again. Every
-- verification records the weight it was judged with. Every statement is idempotent.

ALTER TABLE support_calibrations ADD COLUMN IF NOT EXISTS polarity_weight double precision;
ALTER TABLE answers ADD COLUMN IF NOT EXISTS support_polarity_weight double precision;
