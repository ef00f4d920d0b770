-- 029 (issue 23, item 2): morphology for Czech, Slovak, Polish, Croatian and Slovenian.
-- PostgreSQL has no stemmer for them, so their documents were indexed with simple_unaccent (004),
-- where every inflected form is a word of its own. Where the server has the Hunspell
-- dictionaries converted by rag_pipeline/store/text_dictionaries.py (`rag_<code>.dict` and
-- `.affix`, and its function words in `.stop`, in share/tsearch_data: the embedded server gets them at start, an external one from
-- `rag-pipeline db dictionaries --out DIR`), each language gets an ispell dictionary and a
-- configuration `rag_<language>`: unaccent, then the dictionary (an inflected form becomes its
-- lemma, accent-folded like the text), then simple (a word the dictionary does not know is
-- indexed as simple_unaccent indexed it). A language whose files are missing gets nothing and a
-- NOTICE: its documents stay on simple_unaccent (store/versions.py stages with
-- rag_text_config(...)). A configuration is never changed once created,
-- so chunks indexed with it and questions turned into lexemes with it always agree; installing
-- the files later and running `SELECT rag_install_text_dictionaries()` gives later documents
-- the new configuration (earlier ones keep theirs until they are re-synced).

-- The configuration named `wanted` where this server has it, else `fallback`: what a document is
-- indexed with (store/versions.py).
CREATE OR REPLACE FUNCTION rag_text_config(wanted text, fallback text) RETURNS regconfig
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT c.oid::regconfig FROM pg_ts_config c WHERE c.cfgname = wanted AND pg_ts_config_is_visible(c.oid)),
                    fallback::regconfig)
$$;

CREATE OR REPLACE FUNCTION rag_install_text_dictionaries(file_stem text DEFAULT 'rag_') RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    lang record;
    installed text[] := '{}';
BEGIN
    FOR lang IN SELECT * FROM (VALUES ('cs', 'rag_czech'), ('sk', 'rag_slovak'), ('pl', 'rag_polish'),
                                      ('hr', 'rag_croatian'), ('sl', 'rag_slovenian')) AS l(code, cfg) LOOP
        IF rag_text_config(lang.cfg, 'simple') <> 'simple'::regconfig THEN
            installed := installed || lang.cfg;
            CONTINUE;
        END IF;
        BEGIN
            EXECUTE format('CREATE TEXT SEARCH DICTIONARY %I (TEMPLATE = ispell, DictFile = %I, AffFile = %I,'
                           ' StopWords = %I)', lang.cfg || '_ispell', file_stem || lang.code, file_stem || lang.code,
                           file_stem || lang.code);
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'no text-search dictionary for %: % (documents in that language stay on simple_unaccent; '
                'write the files with `rag-pipeline db dictionaries --out DIR`, copy them into the server''s '
                'share/tsearch_data, then SELECT rag_install_text_dictionaries())', lang.cfg, SQLERRM;
            CONTINUE;
        END;
        EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = simple_unaccent)', lang.cfg);
        EXECUTE format('ALTER TEXT SEARCH CONFIGURATION %I ALTER MAPPING FOR word, hword, hword_part, asciiword,'
                       ' asciihword, hword_asciipart WITH unaccent, %I, simple', lang.cfg, lang.cfg || '_ispell');
        installed := installed || lang.cfg;
    END LOOP;
    RETURN installed;
END $$;

SELECT rag_install_text_dictionaries();
