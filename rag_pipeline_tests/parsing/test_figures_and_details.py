"""What sits inside <figure> and <details> is read (parsing/office/html_tree.open_figures_and_details).
unstructured drops both elements whole: a Jekyll or Hugo code block (<figure class="highlight">),
a table or quotation with its caption, an FAQ's answers, a README's collapsed install steps and
the description of every rustdoc API page (wrapped in <details open>) never reached the index.
Now each is read in place, its caption or question as a paragraph; a toggle's own label
("Expand description") is a control and stays out; Markdown inside a raw <details> is read as
Markdown, as GitHub renders it."""

from __future__ import annotations

import pytest
from helpers import html_mail

from rag_pipeline.parsing import parse_document

INTRO = ("Read this guide before you start: it says how claims are filed, who approves them, which receipts are kept, "
         "and how long the finance team takes to pay them back into the account you named.")


def _page(body: str) -> bytes:
    return f"<html><body><main><h1>Guide</h1><p>{INTRO}</p>{body}<p>The end.</p></main></body></html>".encode()


def _elements(data: bytes, name: str) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in parse_document(data, name).elements]


@pytest.mark.parametrize(("figure", "expected"), [
    ('<figure class="highlight"><pre><code class="language-bash">pip install rag-pipeline --upgrade</code></pre></figure>',
     [("code", "pip install rag-pipeline --upgrade")]),
    ("<figure><blockquote><p>Keep the index true to its sources.</p></blockquote><figcaption>The team motto</figcaption></figure>",
     [("paragraph", "Keep the index true to its sources."), ("caption", "The team motto")]),
    ("<figure><table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>EUR 10</td></tr></table>"
     "<figcaption><p>Table 1:</p> <p>Prices</p></figcaption></figure>",
     [("table", "| Plan | Price |\n|---|---|\n| Basic | EUR 10 |"), ("caption", "Table 1: Prices")]),
    ('<figure><img src="chart.png"><figcaption>Figure 2: Claims per month</figcaption></figure>',
     [("caption", "Figure 2: Claims per month")]),
    ('<figure><img src="decoration.png"></figure>', []),
], ids=["jekyll-code", "quotation", "table", "image-with-caption", "image-only"])
def test_what_a_figure_holds_is_read_with_its_caption(figure: str, expected: list[tuple[str, str]]) -> None:
    elements = _elements(_page(figure), "guide.html")
    assert elements[2:-1] == expected


def test_an_faqs_collapsed_answers_are_read_after_their_questions() -> None:
    faq = ("<details><summary>How long may I travel abroad?</summary><p>Up to ninety days per trip.</p></details>"
           "<details open><summary>Who approves?</summary>The line manager approves every trip.</details>")
    assert _elements(_page(faq), "faq.html")[2:-1] == [
        ("paragraph", "How long may I travel abroad?"), ("paragraph", "Up to ninety days per trip."),
        ("paragraph", "Who approves?"), ("paragraph", "The line manager approves every trip.")]


@pytest.mark.parametrize("label", ["Expand description", "Click to expand", "Show more", "details"])
def test_a_toggles_own_label_stays_out_and_what_it_opens_is_read(label: str) -> None:
    # rustdoc's shape: every API page's description sits in <details class="toggle top-doc" open>
    block = (f'<details class="toggle top-doc" open><summary class="hideme"><span>{label}</span></summary>'
             '<div class="docblock"><p>Adds packed 64-bit integers in a and b using zeromask k.</p></div></details>')
    assert _elements(_page(block), "fn.add.html")[2:-1] == [("paragraph", "Adds packed 64-bit integers in a and b using zeromask k.")]


def test_markdown_inside_a_raw_details_block_is_read_as_markdown() -> None:
    text = ("# Install\n\n<details>\n<summary>Linux</summary>\n\n##### 1. Automatic installer\n\n"
            "```bash\ncurl -fsSL https://example.org/install | bash\n```\n\n* **Check out** the repository.\n\n</details>\n\n"
            "After installing, restart the shell.\n")
    assert _elements(text.encode(), "README.md") == [
        ("heading", "Install"), ("paragraph", "Linux"), ("heading", "1. Automatic installer"),
        ("code", "curl -fsSL https://example.org/install | bash"), ("list_item", "Check out the repository."),
        ("paragraph", "After installing, restart the shell.")]


def test_a_details_tag_shown_in_fenced_code_stays_code() -> None:
    text = "# HTML\n\nWrite it so:\n\n```html\n<details>\n<summary>More</summary>\n</details>\n```\n\nThat is all.\n"
    code = [t for k, t in _elements(text.encode(), "html.md") if k == "code"]
    assert code == ["<details>\n<summary>More</summary>\n</details>"]


def test_an_e_mails_collapsed_section_is_read() -> None:
    mail = html_mail("Trip approval", "Plain version.", "<html><body><p>See below.</p><details><summary>Conditions</summary>"
                     "<p>Economy class only, booked through the portal.</p></details></body></html>")
    texts = [t for _, t in _elements(mail, "trip.eml")]
    assert "Economy class only, booked through the portal." in texts


def test_a_page_of_thousands_of_details_and_figures_keeps_every_answer() -> None:
    # hostile size: 3,000 collapsed answers and 3,000 captioned figures, some nested in each other
    blocks = "".join(f"<details><summary>Question {i}?</summary><figure><pre>answer {i}</pre><figcaption>Listing {i}</figcaption>"
                     f"</figure></details>" for i in range(3_000))
    texts = "\n".join(t for _, t in _elements(_page(blocks), "many.html"))
    assert all(f"answer {i}" in texts and f"Listing {i}" in texts for i in (0, 1_499, 2_999))
    assert texts.count("Question ") == 3_000
