-- 003: a run's lock dies with its holder. Each step of a running run holds a session-level
-- advisory lock on its own connection (gone the moment its process is killed); between two
-- steps `lease_until` covers the gap until the next step's process takes the lock again.
ALTER TABLE runs ADD COLUMN lease_until timestamptz;

-- Fingerprints were taken before redaction, so a guessed secret could be checked against
-- them offline. They are taken after redaction now; the cleaner version changed with it, so
-- every document is parsed again on the next sync and records its fingerprints anew.
TRUNCATE paragraph_fingerprints;
