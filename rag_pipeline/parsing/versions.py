"""Parser version strings, stored with every parsed document so a parser change re-parses.

They live here, apart from the parsers, because planning a sync compares them with the live
index for every listed file: importing PyMuPDF and unstructured only to read two strings cost
seconds on every no-op sync. Library versions come from the installed distributions' metadata.
"""

from __future__ import annotations

from importlib.metadata import version

# Bump "+layoutN" whenever a rule in parsing/pdf changes what a document parses to.
PDF_PARSER_VERSION = f"pymupdf-{version('pymupdf')}+layout11"  # layout11: no table search on a page of more rules than a table holds, a shape drawn many times is one rule (pdf/tables.py); layout10: a column of labels ending in ":" is no text column, a form's value follows its label and is no heading (pdf/reading_order.py, pdf/font_headings.py); layout9: text under a box drawn over it left out (pdf/covered_text.py); layout8: letter-spaced lines read as words (pdf/letter_spacing.py), drop caps joined to their word (pdf/drop_caps.py), text a reader cannot see left out (pdf/hidden_text.py); layout7: Symbol-font bullets as bullets (pdf/text.py); layout6: text of fonts without a Unicode map left out, with a warning (pdf/unreadable.py); layout5: superscript digits marked (parsing/superscripts.py); layout4: heading text tidied (parsing/headings.py); layout3: metadata title, bold paragraphs marked; layout2: page_end on tables continued over pages

UNSTRUCTURED_VERSION = version("unstructured")
# Bump "+mapN" whenever the mapping (office/elements.py, slides.py, tables.py, html_*.py, ...)
# changes what a document parses to.
OFFICE_PARSER_VERSION = f"unstructured-{UNSTRUCTURED_VERSION}+map3"  # map3: heading permalinks/edit links and attribute lists removed, "C#" kept; map2: document title, wholly bold paragraphs marked
# A change that reaches one kind only bumps that kind's own suffix, so documents of the other
# kinds keep their parses (and a file quarantined under the former parser is tried again).
KIND_SUFFIXES = {
    "markdown": "+md4",  # md4: raw HTML a reader is not shown left out (office/html_chrome.drop_hidden); a file with MathML or KaTeX (read by unstructured's HTML partitioner) gets its HTML as shown: MathML read, <figure>/<details> opened, <sup> marked (office/html_content.html_as_shown); md3: raw <details> and <figure> read, Markdown inside <details> as Markdown (markdown_direct.py); UTF-16/32 with a byte-order mark read (office/text.decode_text_strict); md2: raw <sup> digits marked (parsing/superscripts.py); md1: openers python-markdown reads to the end escaped in hostile text (parsing/markdown_openers.py)
    "docx": "+docx6",  # docx6: HTML alternative-format chunks decoded as HTML pages are (office/text.decode_html, html4); docx5: SmartArt read as list items, charts as their title and a table of their values (parsing/office/docx_graphics.py), relationships to parts missing from the package ignored instead of refusing the file (office/archive_parts.py); docx4: equations (OMML) read as linear text (parsing/office/docx_math.py), alternative-format chunks (HTML, MHT, text) read in place (parsing/office/docx_alt_chunks.py); docx3: a drop cap starts the paragraph it begins, text Word does not show left out (parsing/office/docx_wrappers.py); docx2: superscript digits marked (parsing/superscripts.py); docx1: text in tracked insertions, content controls, fields, text boxes and notes read (parsing/office/docx_wrappers.py)
    "html": "+html4",  # html4: bytes that are valid UTF-8 read as UTF-8 whatever the <meta> says, "iso-8859-1" and "ascii" read as Windows-1252, a label the bytes break read by the guess rather than into replacement characters (office/text.decode_html); html3: presentation MathML read in its linear form, ruby without its <rt> (office/html_tree.math_and_ruby_as_read); what <figure> and <details> hold read, a toggle's label left out (office/html_tree.open_figures_and_details); pages nested past 250 levels read to their end, the deep part as plain text, and past 2,048 refused (office/html_tree.py), where the rest was silently dropped; html2: text at font size 0, opacity 0 or in a transparent colour left out, and hidden elements whatever their size (office/html_chrome.py); html1: <sup> digits marked (parsing/superscripts.py)
    "pptx": "+pptx4",  # pptx4: SmartArt read as list items at their depth, charts as their title and a table of their values (parsing/office/pptx_graphics.py); pptx3: text PowerPoint does not show left out: hidden or off-slide shapes, runs of 1 pt, text in the background colour on nothing (parsing/office/pptx_shown.py); pptx2: superscript digits marked (parsing/superscripts.py); pptx1: speaker notes read, after each slide's shapes (parsing/office/slides.py)
    "text": "+txt1",  # txt1: UTF-16/32 with a byte-order mark read, lone "\r" line ends split lines (office/text.decode_text_strict), a short line ending as a sentence is no guessed heading (text_direct._demoted)
    "email": "+eml4",  # eml4: <figure>/<details> of HTML parts read; HTML parts nested past 250 levels read to their end (office/html_tree.py), a body not in its labelled charset read as UTF-8 or Windows-1252 (office/email_parts.py), a short line ending as a sentence is no guessed heading; eml3: hidden elements of HTML parts dropped (office/html_chrome.drop_hidden); eml2: <sup> digits of HTML parts marked (parsing/superscripts.py); eml1: every inline text part and every enclosed message read (parsing/office/email_parts.py)
}
