"""Token ids of the model's own tokenizer: computed once per text, batched by length.

Why ids are kept: the chunker counts the tokens of every chunk's model input to fit it under the
model's limit, and the encoder used to tokenise the same text again. `TokenIds` remembers the ids
of the texts it counted (bounded by a token budget, oldest dropped first), so the encoder of the
same process (the CLI and the in-process Dagster executor run chunk and embed in one process)
reuses them; a text it does not hold is tokenised then. The ids are the same either way: the
encoder's vectors do not depend on where its ids came from (tested).

Why the `tokenizers` library directly: counting tokens only needs the model's tokenizer.json,
which loads in milliseconds, where the sentence-transformers model behind it imports torch and
transformers (seconds). An edit that changes one chunk should not pay for that just to count.

Why batches by token length: a batch is padded to its longest text, so texts sorted by length
and cut into batches of similar length waste almost nothing on padding; a batch is also capped
at TOKENS_PER_BATCH padded tokens, because on a 2-core CPU with a 2 MB L2 cache a batch of 16
full-length texts encodes faster per token than one of 32 or 64 (measured, note 28).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

TOKENS_PER_BATCH = 4096  # padded tokens in one batch at most (16 texts of 256 tokens)
MAX_PADDING = 0.05  # share of padding a batch of MIN_TEXTS or more may not pass
MIN_TEXTS = 4  # below this, a batch's fixed cost outweighs its padding
MAX_REMEMBERED_TOKENS = 4_000_000  # ids kept for reuse: 16 MB of int32, ~1,000 documents' chunks


@dataclass
class EncodeStats:
    """What the encoder did in this process: for the breakdown bench and the run's metadata."""

    texts: int = 0
    batches: int = 0
    tokens: int = 0  # real tokens encoded
    padded_tokens: int = 0  # tokens the model computed, padding included
    ids_reused: int = 0  # texts whose ids came from the chunker's count
    tokenize_s: float = 0.0  # tokenising in the encoder (texts the chunker had not counted)
    encode_s: float = 0.0  # the model's forward passes, pooling included
    batch_sizes: list[int] = field(default_factory=list)
    padding_shares: list[float] = field(default_factory=list)

    @property
    def padding_share(self) -> float:
        return 1 - self.tokens / self.padded_tokens if self.padded_tokens else 0.0


def load_fast_tokenizer(model_dir: Path) -> tuple[Any, int] | None:
    """The model's tokenizer.json through the `tokenizers` library and its padding id, with the
    file's own truncation and padding switched off (they are the export's defaults, not the
    model's limit); None when the folder has no readable tokenizer.json (the caller then uses
    the loaded model's tokenizer)."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        return None
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 -- a file `tokenizers` cannot read: the model's own tokenizer decides
        return None
    pad_id = (tokenizer.padding or {}).get("pad_id")
    if not isinstance(pad_id, int):
        pad_id = tokenizer.token_to_id("[PAD]") or 0
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer, pad_id


def fast_token_ids(model_dir: Path) -> TokenIds | None:
    """`TokenIds` over the folder's tokenizer.json (see `load_fast_tokenizer`), None without one."""
    fast = load_fast_tokenizer(model_dir)
    if fast is None:
        return None
    tokenizer, pad_id = fast
    return TokenIds(lambda texts: [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=True)], pad_id)


class TokenIds:
    """Ids with special tokens, untruncated, per text; remembers those it computed."""

    def __init__(self, tokenize: Callable[[list[str]], list[list[int]]], pad_id: int = 0,
                 budget: int = MAX_REMEMBERED_TOKENS) -> None:
        self._tokenize = tokenize
        self.pad_id = pad_id
        self._budget = budget
        self._held = 0
        self._ids: OrderedDict[str, np.ndarray] = OrderedDict()

    def count(self, texts: list[str]) -> list[int]:
        """Token counts of `texts` (special tokens included), remembering their ids."""
        return [len(ids) for ids in self.ids(texts, remember=True)]

    def ids(self, texts: list[str], remember: bool = False) -> list[np.ndarray]:
        """Each text's ids: remembered ones reused, the rest tokenised in one call."""
        found: list[np.ndarray | None] = [self._ids.get(t) for t in texts]
        missing = [i for i, ids in enumerate(found) if ids is None]
        if missing:
            fresh = self._tokenize([texts[i] for i in missing])
            for i, ids in zip(missing, fresh, strict=True):
                found[i] = np.asarray(ids, dtype=np.int32)
                if remember:
                    self._remember(texts[i], found[i])
        return found  # type: ignore[return-value]

    def held(self, text: str) -> bool:
        return text in self._ids

    def remember(self, text: str, ids: Sequence[int] | np.ndarray) -> None:
        """Keep ids another process computed with the same tokenizer (the chunk step's helper
        process: see sync/chunk_helper.py), so the encoder here reuses them."""
        self._remember(text, np.asarray(ids, dtype=np.int32))

    def _remember(self, text: str, ids: np.ndarray) -> None:
        if text in self._ids or len(ids) > self._budget:
            return
        self._ids[text] = ids
        self._held += len(ids)
        while self._held > self._budget:
            _, dropped = self._ids.popitem(last=False)
            self._held -= len(dropped)


def truncated(ids: np.ndarray, max_tokens: int) -> np.ndarray:
    """Ids cut to the model's input as the tokenizer truncates a single text: the leading ids
    kept, the closing special token ([SEP]) kept last."""
    if len(ids) <= max_tokens:
        return ids
    return np.concatenate([ids[: max_tokens - 1], ids[-1:]])


def length_batches(lengths: Sequence[int], max_texts: int, max_tokens: int = TOKENS_PER_BATCH) -> list[np.ndarray]:
    """Indices of the texts in batches, longest first (stable): a batch ends at `max_texts`
    texts, when padding it to its longest text would pass `max_tokens` (one text at least), or
    when one more text would make its padding pass MAX_PADDING (from MIN_TEXTS texts on)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        limit = min(len(order) - start, max(1, min(max_texts, max_tokens // longest)))
        size, real = 1, longest
        while size < limit:
            grown = real + int(lengths[order[start + size]])
            if size >= MIN_TEXTS and 1 - grown / (longest * (size + 1)) > MAX_PADDING:
                break
            size, real = size + 1, grown
        batches.append(order[start:start + size])
        start += size
    return batches


def padded(batch: Sequence[np.ndarray], pad_id: int = 0) -> dict[str, np.ndarray]:
    """The model's inputs for a batch of ids, padded on the right as the tokenizer pads."""
    width = max(len(ids) for ids in batch)
    input_ids = np.full((len(batch), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
