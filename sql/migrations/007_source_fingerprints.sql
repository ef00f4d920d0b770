-- 007: what the content of a listed object was, by its listing fingerprint (S3: ETag and size).
-- A listing gives ETags, not content hashes; this remembers which SHA-256 an (ETag, size) had,
-- so an unchanged object is never downloaded again and an object re-uploaded with identical
-- bytes (a multipart ETag differs with the part size) is never re-parsed. One row per object:
-- the fingerprint last seen and the content it had then.
CREATE TABLE source_fingerprints (
    source          text NOT NULL,
    uri             text NOT NULL,
    fingerprint     text NOT NULL,
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, uri)
);
