-- 002: fingerprints of paragraphs per document, to find notices (legal disclaimers,
-- confidentiality footers) repeated across many documents of a source.
CREATE TABLE paragraph_fingerprints (
    source       text NOT NULL,
    fingerprint  text NOT NULL,
    uri          text NOT NULL,
    PRIMARY KEY (source, fingerprint, uri)
);
CREATE INDEX paragraph_fingerprints_uri ON paragraph_fingerprints (source, uri);
