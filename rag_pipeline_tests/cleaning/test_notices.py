"""Which recurring paragraphs are notices (cleaning/notices.py), element by element; the sync
test beside it (test_cleaning_pipeline.py) shows the same through a real source."""

from __future__ import annotations

from rag_pipeline.cleaning.notices import MAX_NOTICES, paragraph_digest, strip_notices
from rag_pipeline.parsing.types import Element

NOTICE = "This document is confidential and intended solely for employees of Larkspur Logistics."
COPYRIGHT = "Copyright 2026 Larkspur Logistics. All rights reserved. Printed copies are uncontrolled."
CLAUSE = "Either party may terminate this agreement with 90 days written notice to the other party."


def _digests(*texts: str) -> set[str]:
    return {paragraph_digest(t) for t in texts}


def _texts(elements: list[Element]) -> list[str]:
    return [e.text for e in elements]


def test_notices_on_either_edge_go_and_the_same_text_inside_the_document_stays() -> None:
    elements = [Element("paragraph", NOTICE), Element("heading", "Fuel cards"),
                Element("paragraph", "Fuel cards are issued by the depot manager on request."),
                Element("paragraph", CLAUSE),  # recurring, but between the document's own text
                Element("paragraph", "A lost card is blocked by calling the depot."),
                Element("heading", "Legal"), Element("paragraph", COPYRIGHT), Element("paragraph", NOTICE)]
    kept, removed = strip_notices(elements, _digests(NOTICE, COPYRIGHT, CLAUSE))
    assert removed == 3
    assert _texts(kept) == ["Fuel cards", "Fuel cards are issued by the depot manager on request.", CLAUSE,
                            "A lost card is blocked by calling the depot.", "Legal"]


def test_a_recurring_page_header_or_footer_goes_wherever_it_stands() -> None:
    elements = [Element("paragraph", "Pallets are counted every morning before the first truck leaves."),
                Element("page_footer", NOTICE, page=1),
                Element("paragraph", "Counts that differ from the manifest are reported to the shift lead.", page=2)]
    kept, removed = strip_notices(elements, _digests(NOTICE))
    assert removed == 1 and NOTICE not in _texts(kept)


def test_a_document_of_more_recurring_paragraphs_than_notices_shares_a_template_and_keeps_them() -> None:
    clauses = [f"Clause {word}: {CLAUSE}" for word in ("one", "two", "three", "four")][: MAX_NOTICES + 1]
    elements = [Element("heading", "Supply agreement with Gamma Textiles"),
                Element("paragraph", "This agreement is made between Larkspur Logistics and Gamma Textiles.")]
    for clause in clauses:
        elements += [Element("heading", clause[:12]), Element("paragraph", clause)]
    elements.append(Element("paragraph", NOTICE))
    kept, removed = strip_notices(elements, _digests(*clauses, NOTICE))
    assert removed == 0 and kept == elements


def test_a_document_whose_every_paragraph_recurs_keeps_its_text() -> None:
    elements = [Element("heading", "Memo"), Element("paragraph", "The canteen closes at 15:00 on Fridays.")]
    kept, removed = strip_notices(elements, _digests("The canteen closes at 15:00 on Fridays."))
    assert removed == 0 and kept == elements


def test_huge_hostile_input_is_read_once_and_keeps_every_inner_paragraph() -> None:
    """200,000 elements alternating own text and one of four recurring clauses, notices on both edges."""
    clauses = [f"Clause {word}: {CLAUSE}" for word in ("one", "two", "three", "four")]
    elements = [Element("paragraph", NOTICE)]
    for i in range(100_000):
        elements += [Element("paragraph", f"Own paragraph {chr(65 + i % 26)}{i} about pallets and trucks."),
                     Element("paragraph", clauses[i % 4])]
    elements.append(Element("paragraph", COPYRIGHT))
    kept, removed = strip_notices(elements, _digests(NOTICE, COPYRIGHT))
    assert removed == 2 and len(kept) == 200_000
    kept, removed = strip_notices(elements, _digests(NOTICE, COPYRIGHT, *clauses))  # a template: nothing goes
    assert removed == 0
