-- 022 (issue 23, item 1): questions that name a numbered part of a document ("§ 12", "section
-- 7.2.1", "Article 12", "Item 1A", "Note 5", "čl. 12") find that part through the chunks' own
-- section paths.
--
-- A heading is parsed into (family, number, title): "§ 12 Náhrada škody" -> (s, 12, Náhrada
-- škody), "7.2.1 Scope of the audit" -> (s, 7.2.1, Scope of the audit), "Article 12 – Title" ->
-- (a, 12, Title), "Item 1A. Risk Factors" -> (i, 1a, Risk Factors), "Note 5 — Leases" -> (n, 5,
-- Leases). Families, whatever the language: s = section (§, Section, Sec., Clause, Abschnitt,
-- Paragraph, Paragraf, Oddíl, and a bare number "7.2.1 Title"), a = article (Article, Art.,
-- Artikel, Článek, Čl.), i = item, n = note, p = part (Part, Teil, Partie, Část, Title),
-- c = chapter (Chapter, Kapitel, Chapitre, Hlava, Díl). A section's number is its whole dotted
-- number, then its dotted ancestors ("7.2.1" is within "7.2" and "7"), so a path whose numbered
-- headings were flattened still belongs to its parents. The key of a heading is family:number
-- ("s:7.2.1"); retrieval/section_refs.py turns a question into the same keys, and a test holds the
-- two parsers to the same cases.
-- The functions read nothing but their arguments (IMMUTABLE): the expression index below is what
-- the search's structural branch uses, inside the same visibility and group filter as every branch.
-- Those that call another of them keep the migration's search_path (SET ... FROM CURRENT): an
-- index build runs them under a search_path of pg_catalog only.

-- (family, number, title) of one heading, or NULL when it carries no number. Letters are folded
-- by hand for the non-ASCII keywords: lower() leaves Č as it is under the C collation.
CREATE OR REPLACE FUNCTION rag_section_parts(heading text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT CASE
        WHEN m IS NULL THEN NULL
        WHEN m[1] IS NULL AND m[2] !~ '^[0-9]{1,2}(\.[0-9]{1,3}){0,4}(-[0-9]{1,3})?$' THEN NULL  -- bare: "7.2.1 Title" only
        WHEN m[1] IS NULL AND m[2] !~ '\.' AND m[3] !~ '^\.' AND btrim(m[4]) = '' THEN NULL  -- a lone "7"
        ELSE ARRAY[
            CASE
                WHEN m[1] IS NULL OR m[1] ~ '^(§|section|sec\.|clause|abschnitt|paragraph|paragraf|odd[ií]l)$' THEN 's'
                WHEN m[1] ~ '^(article|art\.|artikel|[čc]l[áa]nek|[čc]l\.)$' THEN 'a'
                WHEN m[1] = 'item' THEN 'i'
                WHEN m[1] = 'note' THEN 'n'
                WHEN m[1] ~ '^(part|teil|partie|[čc][áa]st|title)$' THEN 'p'
                ELSE 'c'
            END,
            CASE WHEN m[2] ~ '\.' THEN regexp_replace(m[2], '(\.0)+$', '') ELSE m[2] END,  -- "4.0" is 4
            btrim(right(left(heading, 200), char_length(m[4])), E' \t.:-\u2013\u2014')]  -- as written
    END
    FROM (SELECT regexp_match(
        translate(lower(left(heading, 200)), 'ČÁÍ', 'čáí'),
        '^\s*(§|section|sec\.|clause|abschnitt|paragraph|paragraf|odd[ií]l|article|art\.|artikel|[čc]l[áa]nek|[čc]l\.'
        '|item|note|part|teil|partie|[čc][áa]st|title|chapter|kapitel|chapitre|hlava|d[íi]l)?\s*'
        '([0-9]{1,4}(?:\.[0-9]{1,3}){0,4}(?:-[0-9]{1,3})?[a-z]?|[ivxlc]{1,7})(?![0-9a-z])(\.?)(.*)$') AS m) parsed
    WHERE m IS NULL OR m[1] IS NOT NULL OR m[2] ~ '^[0-9]'  -- a bare roman numeral is a word ("I", "civil")
$$;

-- The keys of one heading: its own ("s:7.2.1"), then its dotted ancestors ("s:7.2", "s:7"). An
-- exhibit numbered after its section ("2.3.59-12") is its own part, within 2.3.59 and its parents.
CREATE OR REPLACE FUNCTION rag_section_key_set(heading text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path FROM CURRENT AS $$
    SELECT CASE WHEN p IS NULL THEN '{}'::text[] ELSE ARRAY[p[1] || ':' || p[2]] || ARRAY(
        SELECT p[1] || ':' || array_to_string((string_to_array(b, '.'))[1:n], '.')
        FROM generate_series(cardinality(string_to_array(b, '.')) - CASE WHEN b = p[2] THEN 1 ELSE 0 END, 1, -1) AS n)
    END
    FROM (SELECT rag_section_parts(heading) AS p) parsed, LATERAL (SELECT split_part(p[2], '-', 1) AS b) base
$$;

-- The keys of the label lines of a chunk's text: a line that is a § or article label and nothing
-- else ("§ 35a", "Čl. IV"), as an amending law quotes the paragraphs it inserts, which no
-- parser makes headings. A label with a title on its line (a table of contents) is not one.
CREATE OR REPLACE FUNCTION rag_section_label_keys(body text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path FROM CURRENT AS $$
    SELECT coalesce(array_agg(DISTINCT k ORDER BY k), '{}'::text[])
    FROM regexp_matches(left(body, 20000),
        '^[ \t]*((?:§|[čČ]l\.|[čČ]l[áÁ]nek|[čČ]LÁNEK|[Aa]rticle|ARTICLE|[Aa]rtikel|ARTIKEL|[Ii]tem|ITEM|[Ss]ection|SECTION'
        '|[Nn]ote|NOTE|[Aa]bschnitt|ABSCHNITT)[ \t]*(?:[0-9]{1,4}(?:\.[0-9]{1,3}){0,4}[a-z]?|[IVXLC]{1,7})\.?)[ \t]*$', 'gn') AS l,
        unnest(rag_section_key_set(l[1])) AS k
$$;

-- Every key of a chunk: each heading's own and its ancestors', and its label lines': what the
-- index holds and the structural branch matches.
CREATE OR REPLACE FUNCTION rag_section_keys(path text[], body text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path FROM CURRENT AS $$
    SELECT coalesce(array_agg(DISTINCT k ORDER BY k), '{}'::text[])
    FROM (SELECT unnest(rag_section_key_set(h)) FROM unnest(path) AS h
          UNION ALL SELECT unnest(rag_section_label_keys(body))) AS keys(k)
$$;

-- How closely a chunk is the part a question names (`refs`: the question's keys): 1 when its
-- innermost heading or one of its label lines is that part, 0.5 when it lies within it (an outer
-- heading, or an ancestor number), 0 otherwise. The rerank stage puts the 1s first (retrieval/rerank.py).
CREATE OR REPLACE FUNCTION rag_section_match(path text[], body text, refs text[]) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path FROM CURRENT AS $$
    SELECT CASE
        WHEN cardinality(refs) = 0 THEN 0.0
        WHEN (rag_section_key_set(path[cardinality(path)]))[1] = ANY (refs)
             OR rag_section_label_keys(body) && refs THEN 1.0
        WHEN rag_section_keys(path, body) && refs THEN 0.5
        ELSE 0.0
    END
$$;

CREATE INDEX IF NOT EXISTS chunks_section_keys ON chunks USING gin (rag_section_keys(section_path, text));
