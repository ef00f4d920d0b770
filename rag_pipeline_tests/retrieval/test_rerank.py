"""The deterministic rerank stage: exact phrases, numbers and identifiers, section titles and
term proximity move a fused candidate up; the same input always gives the same order; every
feature is kept on the hit for the search log."""

from __future__ import annotations

import pytest

from rag_pipeline.retrieval import rerank
from rag_pipeline.retrieval import search as retrieval
from rag_pipeline.store import database
from rag_pipeline_tests.helpers import index_documents

C = rerank.Candidate


def _order(query: str, candidates: list[rerank.Candidate]) -> list[int]:
    return [index for index, _, _ in rerank.rerank(query, candidates)]


def test_a_candidate_with_the_querys_identifier_moves_above_a_better_fused_one() -> None:
    """The identifier is a rare query term, so the chunk holding it covers more of the query's
    idf (term coverage, from the SQL) and moves up; the verbatim-identifier feature is computed
    and logged beside it (the fitted defaults give it no weight of its own: term coverage
    already counts it)."""
    candidates = [C("Form EXP-2230 is for travel advances.", [], 0.032, 0.35),
                  C("Claims use form EXP-2231 within 30 days.", [], 0.030, 0.65)]
    assert _order("what is form EXP-2231 for", candidates) == [1, 0]
    found = rerank.rerank("what is form EXP-2231 for", candidates)[0][2]
    assert found["identifiers"] == 1.0
    with_identifiers = {**rerank.WEIGHTS, "identifiers": 0.3}
    even = [C(c.text, [], c.fused, 0.5) for c in candidates]  # equal coverage: only the feature tells them apart
    assert [i for i, _, _ in rerank.rerank("what is form EXP-2231 for", even, with_identifiers)] == [1, 0]


def test_exact_phrase_and_proximity_beat_scattered_terms() -> None:
    scattered = C("The head of sales said the department budget covers travel, and a trip needs approval later.", [], 0.031, 0.8)
    together = C("Business trips need approval by the head of department.", [], 0.030, 0.8)
    assert _order("approval by the head of department", [scattered, together]) == [1, 0]


def test_section_title_naming_the_subject_moves_a_chunk_up() -> None:
    plain = C("Requests are answered within five working days.", ["Procurement"], 0.030, 0.3)
    titled = C("Requests are answered within five working days.", ["Parental leave"], 0.030, 0.3)
    assert _order("how fast are parental leave requests answered", [plain, titled]) == [1, 0]


def test_the_named_part_comes_first_and_a_part_merely_within_it_gets_no_priority() -> None:
    """section_match 1 (the chunk is the part the question names) outranks any weighed evidence;
    0.5 (under it, like a whole manual's numbered sections for "IRM 2.3.59") does not."""
    best = C("Hotels in Berlin are reimbursed up to EUR 165 per night.", ["3 Travel"], 0.033, 1.0)
    named = C("Meals are paid as a daily allowance.", ["3 Travel", "3.2 Meals"], 0.016, 0.0, section_match=1.0)
    within = C("Trains are booked second class.", ["3 Travel", "3.2 Meals", "3.2.1 Trains"], 0.030, 0.0,
               section_match=0.5)
    assert _order("hotel costs in Berlin per night under 3.2", [best, within, named]) == [2, 0, 1]


def test_same_input_same_order_and_ties_keep_the_fused_order() -> None:
    same = [C("identical text", [], 0.03, 0.0) for _ in range(5)]
    assert _order("nothing matches", same) == [0, 1, 2, 3, 4]
    many = [C(f"chunk {i} about leave and pay {i % 3}", [f"S{i % 4}"], 0.03 - i * 1e-4, (i % 5) / 5) for i in range(40)]
    assert len({tuple(_order("leave pay 2", many)) for _ in range(3)}) == 1


@pytest.mark.parametrize("query", ["", "   ", "the of and", "%%%", "ü" * 2000, "1 2 3 4 5 6 7 8 9 0" * 50])
def test_hostile_or_empty_queries_give_bounded_features(query: str) -> None:
    for _, value, found in rerank.rerank(query, [C("some text 1 2 3", ["A"], 0.02, 0.1), C("", [], 0.0, 0.0)]):
        assert all(0.0 <= v <= 1.0 for v in found.values())
        assert value >= 0.0


def test_reranked_search_keeps_its_features_on_each_hit(db_url: str, embedder) -> None:
    index_documents(db_url, embedder, {
        "forms.md": ("Expense forms", "Expense claims use form EXP-2231. Submit it within 30 days of returning."),
        "advances.md": ("Travel advances", "Form EXP-2230 requests a travel advance before the trip."),
    }, "staff")
    with database.connect(db_url) as conn:
        hits = retrieval.search(conn, embedder, "form EXP-2231", ["staff"], k=2, log=False)
    assert hits[0].uri == "forms.md"
    for hit in hits:
        assert {"rerank", "fused", "identifiers", "phrase", "section", "proximity", "term_coverage"} <= set(hit.features)
        assert "features" in hit.to_dict(with_text=False)


def test_folding_equals_decomposing_every_character() -> None:
    """fold() decomposes only the non-ASCII runs: on any text (accents, ligatures, scripts
    without case, combining marks alone, lone surrogates, ASCII) it equals dropping the
    combining marks of the whole casefolded text's NFKD form."""
    import random
    import unicodedata

    def reference(text: str) -> str:
        decomposed = unicodedata.normalize("NFKD", text.casefold())
        return "".join(ch for ch in decomposed if not unicodedata.combining(ch))

    rnd = random.Random(3)
    alphabet = ("abcXYZ 09-./" + "ÜüßẞÅåﬁ㎏Ⅻ①ǅİıΣσς" + "\u0301\u0308\u20dd" + "日本語한국어ÆØ" + "\ud800" + "\u212a")
    samples = ["", "Plain ASCII only.", "Übersicht über ÖL", "ﬁnal Straße", "\u0301\u0301", "K\u212a"]
    samples += ["".join(rnd.choices(alphabet, k=rnd.randint(1, 80))) for _ in range(2_000)]
    samples += ["".join(chr(rnd.randint(0, 0x2FFFF)) for _ in range(40)) for _ in range(500)]
    for text in samples:
        assert rerank.fold(text) == reference(text), repr(text)


def test_features_equal_reading_every_feature_from_the_whole_text() -> None:
    """features() skips what a query gives nothing to look for and reads ASCII text with the
    ASCII pattern: on random queries and texts (function words, identifiers, accents, scripts
    without case, punctuation runs, a long chunk) every feature equals the plain computation of
    each over all of the text's words."""
    import random
    import re

    word = re.compile(r"\w+(?:[-./]\w+)*", re.UNICODE)

    def reference(query: str, candidate: rerank.Candidate, best: float) -> dict[str, float]:
        parsed = rerank.query_features(query)
        text_words = word.findall(rerank.fold(candidate.text))
        stems = [w[:rerank.STEM_CHARS] for w in text_words]
        content = [s for w, s in zip(text_words, stems, strict=True) if w not in rerank.STOP_WORDS]
        section = {w[:rerank.STEM_CHARS] for w in word.findall(rerank.fold(" ".join(candidate.section_path)))}
        found = {"fused": candidate.fused / best if best > 0 else 0.0, "term_coverage": candidate.term_coverage,
                 "phrase": rerank._share(parsed["pairs"], set(zip(content, content[1:]))),
                 "identifiers": rerank._share(parsed["identifiers"], set(text_words)),
                 "section": rerank._share(parsed["stems"], section),
                 "proximity": rerank._proximity(stems, set(parsed["stems"]) & set(stems))}
        return {name: round(value, 6) for name, value in found.items()}

    rnd = random.Random(11)
    vocabulary = ("the of and to in leave leaves annual pay payroll 2019 10-k 800-53 s.2155 approval approvals "
                  "Übersicht über Straße ﬁnal 日本語 İstanbul café CAFÉ données d'accès -- ... / . - x").split()
    for n in range(3_000):
        query = " ".join(rnd.choices(vocabulary, k=rnd.randint(0, 8)))
        text = " ".join(rnd.choices(vocabulary, k=rnd.randint(0, 400 if n % 100 == 0 else 40)))
        section = [" ".join(rnd.choices(vocabulary, k=rnd.randint(0, 4))) for _ in range(rnd.randint(0, 3))]
        candidate = rerank.Candidate(text, section, rnd.random() / 30, rnd.random())
        best = rnd.choice([0.0, 1 / 30, candidate.fused])
        parsed = rerank.query_features(query)
        assert rerank.features(parsed, candidate, best) == reference(query, candidate, best), (query, text, section)
