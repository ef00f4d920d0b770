"""Front matter: the metadata block documentation sites put at the top of a Markdown file.

Jekyll, Hugo, Docusaurus, MkDocs and most wikis exported to Git open a page with a YAML block
between `---` lines (Hugo also TOML between `+++`): `title: Travel policy`, `sidebar_position:
3`, `tags: [travel]`. Read as Markdown it was a paragraph of the first chunk ("title: Travel
policy author: HR tags: [travel, policy] layout: page"), and the page's title, which such sites
often give nowhere else, was not the document's title: the identity line fell back to the file
name. So a block of `key: value` lines (or `key = value` between `+++`) closed within the first
MAX_LINES lines is taken off the text; its `title` becomes the document's title property (as a
PDF's or a DOCX's), and its description-like keys (`description`, `summary`, `excerpt`,
`abstract`, `subtitle`) stay as the document's first paragraph, since they are prose a reader of
the page sees. Every other key (layout, slug, weight, dates, tags, authors, flags) is site
configuration and is left out.

Read by lines, not by a YAML parser: a block that is not plain `key: value` lines (a document that
merely opens with a horizontal rule, prose between two rules) is left as Markdown, and nothing in
it is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINES = 200  # front matter is a few lines; a closing fence further down is a horizontal rule
_FENCES = {"---": ("---", "..."), "+++": ("+++",)}
_YAML_KEY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)\s*:(?:\s+(?P<value>.*)|\s*)$")
_TOML_KEY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)\s*=\s*(?P<value>.*)$")
_CONTINUATION = re.compile(r"\s+\S|-\s|-$|#|\[|\]")  # indented, a list item, a comment, a TOML table
_PROSE_KEYS = ("description", "summary", "excerpt", "abstract", "subtitle")


@dataclass(frozen=True)
class FrontMatter:
    title: str | None
    prose: list[str]  # the description-like values, in the block's order
    body: str  # the Markdown after the block


def split_front_matter(text: str) -> FrontMatter | None:
    """The front matter of a Markdown text and the text after it, or None when it has none."""
    lines = text.split("\n", MAX_LINES + 1)
    fence = lines[0].rstrip()
    if fence not in _FENCES:
        return None
    closing = next((i for i, line in enumerate(lines[1:MAX_LINES + 1], 1) if line.rstrip() in _FENCES[fence]), None)
    if closing is None or closing == 1:
        return None
    pattern = _TOML_KEY if fence == "+++" else _YAML_KEY
    values: dict[str, str] = {}
    block: str | None = None  # the key whose folded or literal block (">", "|") the indented lines continue
    for line in lines[1:closing]:
        if block is not None and line[:1].isspace() and line.strip():
            values[block] = f"{values[block]} {line.strip()}".strip()
            continue
        block = None
        if not line.strip() or _CONTINUATION.match(line):
            continue
        found = pattern.match(line.rstrip())
        if found is None:
            return None  # not metadata: prose between two horizontal rules
        key, raw = found.group("key").casefold(), (found.group("value") or "").strip()
        if key not in values:
            values[key] = _scalar(raw)
            block = key if re.fullmatch(r"[>|][+-]?", raw) else None
    if not values:
        return None
    body = "\n".join(lines[closing + 1:])
    return FrontMatter(values.get("title") or None, [values[k] for k in _PROSE_KEYS if values.get(k)], body)


def _scalar(value: str) -> str:
    """A one-line scalar as written: an anchor, quotes and a trailing comment off; a block marker
    (">", "|"), a list, a mapping, an alias or a tag is no scalar and reads as ""."""
    value = re.sub(r"^&\S+\s*", "", value.strip())  # an anchor names the value; an alias ("*a") is none
    if value[:1] in ("'", '"') and len(value) > 1 and value[-1] == value[0]:
        return value[1:-1].replace("''", "'") if value[0] == "'" else value[1:-1].replace('\\"', '"')
    if value[:1] in (">", "|", "[", "{", "&", "*", "!"):
        return ""
    return re.sub(r"\s+#.*$", "", value).strip()
