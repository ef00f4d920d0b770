"""Text written without spaces (Chinese, Japanese) chunked within the model's input: it was one
"word" to the chunker, so a 2,160-character Japanese paragraph became one chunk of 2,162 tokens
and the model read its first 256. Now a paragraph splits after 。！？ and a run with no such stop
is cut by characters to the budget (chunking/packing.character_windows). Nothing is lost."""

from __future__ import annotations

import pytest

from rag_pipeline.chunking.chunks import chunk_elements, split_chunk
from rag_pipeline.parsing.types import Element

JAPANESE = "本規程は、当社の従業員が出張する際の旅費の支給について定めるものである。"
CHINESE = "员工出差期间的住宿费用按照公司标准报销，超出部分由个人承担"  # no full stop at all


def _chunks(text: str, embedder) -> list:
    chunks = chunk_elements([Element("heading", "旅費規程", level=1), Element("paragraph", text)],
                            embedder.count_tokens, embedder.max_tokens)
    assert "".join(c.text for c in chunks) == text
    assert all(c.token_count == embedder.count_tokens([c.search_text])[0] <= embedder.max_tokens for c in chunks)
    return chunks


def test_a_japanese_paragraph_splits_after_its_full_stops(embedder) -> None:
    chunks = _chunks(JAPANESE * 60, embedder)
    assert len(chunks) >= 8
    assert all(c.text.endswith("。") for c in chunks)


@pytest.mark.parametrize("size", [1_740, 200_000])
def test_a_run_without_any_stop_is_cut_to_the_budget(embedder, size: int) -> None:
    text = (CHINESE * (size // len(CHINESE) + 1))[:size]
    chunks = _chunks(text, embedder)
    assert len(chunks) >= size // 256
    assert min(c.token_count for c in chunks[:-1]) >= embedder.max_tokens - 40  # full, not one character each


def test_a_stored_chunk_of_unspaced_text_splits_for_a_smaller_model(embedder) -> None:
    """A model migration to a smaller input (migration/rechunk.py) cuts such a chunk too."""
    (chunk,) = _chunks(JAPANESE * 5, embedder)
    pieces = split_chunk(chunk, embedder.count_tokens, 64)
    assert "".join(p.text for p in pieces) == chunk.text and len(pieces) >= 3
    assert all(embedder.count_tokens([p.search_text])[0] <= 64 for p in pieces)
