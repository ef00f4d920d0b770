"""Structured XML documents read by their structure, whatever the schema: legislation (Akoma
Ntoso, the Finnish Finlex acts), articles and books (JATS, DocBook, TEI, DITA).

Every such schema says the same things with its own names: sections nest; a section opens with
its number and its title ("1 §" + "Lain tarkoitus", <num>Article 5</num><heading>Scope</heading>,
<sec><label>2.1</label><title>Methods</title>); the rest is text. So:

- a title is an element whose local name (namespace dropped, case folded) is or ends with a title
  word of TITLE_WORDS (title, heading, head, otsikko, nimeke, rubrik, titre, titel, nadpis ...);
  a number element (NUMBER_WORDS: num, label, tunnus ...) before it in the same parent is said
  with it ("1 § Lain tarkoitus"), and a number with no title beside it is the heading alone;
- a heading's level is how many of its section's ancestors open with a heading themselves;
- any other element with text of its own (its text or a child's tail), or with no child
  elements, is one paragraph of all its text (inline markup such as <italic> or
  <SaadosKursiiviKooste> inside it stays inside); a table row is its cells joined by " | ";
  an element that only holds elements is read through;
- metadata blocks (meta, metadata, teiHeader) are left out: they describe the document.

XML is parsed without entity expansion, DTD loading or network access, past lxml's depth and
size guards never; the walk is iterative, so a deep file cannot exhaust the stack. Entities are
then read once where that is safe (`_expand_entities`): HTML's character names (&mdash;) that a
DTD the parser does not load would declare, and the file's own plain-text entities. A "billion
laughs" file, an external entity or markup in an entity is refused, not expanded. An XHTML page
named .xml is HTML.
"""

from __future__ import annotations

import re
from html.entities import html5

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.types import Element, ParsedDocument, ParseError

TITLE_WORDS = ("title", "heading", "head", "otsikko", "otsikkokooste", "nimeke", "rubrik", "rubrique", "titre",
               "titel", "uberschrift", "nadpis", "titulo", "titolo", "tytul", "subject")
NUMBER_WORDS = ("num", "number", "label", "tunnus", "tunnuskooste", "nro", "no")
SKIPPED = ("meta", "metadata", "teiheader", "identifiointiosa")
ROWS = ("row", "tr")
_SPACE = re.compile(r"\s+")
_UNDEFINED = re.compile(r"Entity '[A-Za-z][A-Za-z0-9]*' not defined")
_NAMED = re.compile(rb"<!\[CDATA\[.*?\]\]>|<!--.*?-->|&([A-Za-z][A-Za-z0-9]{1,31});", re.DOTALL)  # CDATA, comments kept
_XML_NAMES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_MIN_EXPANSION = 1_000_000  # characters entities may add to a small file, in all


def parse_xml_file(data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
    """The elements of a structured XML document (module docstring)."""
    from lxml import etree

    from rag_pipeline.parsing.office.version import PARSER_VERSION

    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        if not _UNDEFINED.search(str(exc)):
            raise ParseError(f"the XML is not well-formed ({exc}); fix or re-export the file") from exc
        root = _with_named_characters(data, parser, exc)
    if _local(root) == "html":
        from rag_pipeline.parsing.office import parse_with_unstructured

        return parse_with_unstructured(data, name=name, kind="html", limits=limits)
    _expand_entities(root, budget=max(len(data), _MIN_EXPANSION))
    elements = _read(root)
    title = next((e.text for e in elements if e.kind == "heading"), None)
    return ParsedDocument(elements=elements, parser=PARSER_VERSION, title=title)


def _with_named_characters(data: bytes, parser, error: Exception):  # noqa: ANN001, ANN202 -- lxml types
    """The tree of a file that uses HTML's character names (&mdash;, &eacute;) with no DTD to
    declare them: each written as its character reference, which XML itself reads (not inside a
    CDATA section or a comment, where it is text). Only on the error path: a file that parses is
    read as written."""
    from lxml import etree

    def named(match: re.Match[bytes]) -> bytes:
        if match.group(1) is None:
            return match.group(0)
        name = match.group(1).decode("ascii")
        if name in _XML_NAMES or f"{name};" not in html5:
            return match.group(0)
        return "".join(f"&#{ord(c)};" for c in html5[f"{name};"]).encode("ascii")

    try:
        return etree.fromstring(_NAMED.sub(named, data), parser)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"the XML is not well-formed ({error}); an entity it uses is declared nowhere: "
                         "fix or re-export the file with entities resolved") from exc


def _expand_entities(root, budget: int) -> None:  # noqa: ANN001 -- an lxml element
    """Each entity reference lxml left unexpanded, read as its text once: an HTML character name
    (a JATS or DocBook file whose DTD declares &mdash; is not loaded), or an entity the file's
    own DTD declares as plain text (&company;). One level only and within `budget` characters
    in all, so nested entities ("billion laughs"), external ones (SYSTEM "file:///etc/passwd")
    and markup are refused, never expanded. Folded one parent at a time, in one pass over its
    children: a paragraph of 50,000 &mdash; took 22 s when each was folded into the text so far."""
    from lxml import etree

    dtd = root.getroottree().docinfo.internalDTD
    declared = {e.name: e.content for e in dtd.iterentities()} if dtd is not None else {}
    parents = {id(e.getparent()): e.getparent() for e in root.iter(etree.Entity)}
    for parent in parents.values():
        budget = _fold_entities(parent, declared, budget)


def _fold_entities(parent, declared: dict[str, str | None], budget: int) -> int:  # noqa: ANN001
    """`parent`'s entity children replaced by their text (`_expand_entities`); the budget left."""
    from lxml import etree

    holder, parts, entities = None, [parent.text or ""], []
    for child in parent:
        if child.tag is not etree.Entity:  # lxml's tag of an entity reference
            _set_text(parent, holder, parts)
            holder, parts = child, [child.tail or ""]
            continue
        value = _entity_text(child.name, declared)
        budget -= len(value or "")
        if value is None or budget < 0:
            raise ParseError(f"the XML uses the entity &{child.name}; that this parser does not expand (declared "
                             "outside the file, external, nested or too large: an entity-expansion attack looks "
                             "so); export it with entities resolved")
        parts += [value, child.tail or ""]
        entities.append(child)
    _set_text(parent, holder, parts)
    for entity in entities:
        entity.tail = None
        parent.remove(entity)
    return budget


def _set_text(parent, holder, parts: list[str]) -> None:  # noqa: ANN001
    """The text gathered since `holder` (None: the parent's own text) set where it belongs."""
    text = "".join(parts) or None
    if holder is None:
        parent.text = text
    else:
        holder.tail = text


def _entity_text(name: str, declared: dict[str, str | None]) -> str | None:
    """The text of entity `name`, or None where it is not plain text read once."""
    if name in declared:
        value = declared[name]
        return value if value is not None and "&" not in value and "<" not in value else None
    return html5.get(f"{name};")


def _local(node) -> str:  # noqa: ANN001 -- an lxml element
    tag = node.tag if isinstance(node.tag, str) else ""
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1].casefold()


def _is_title(node) -> bool:  # noqa: ANN001
    return _named(_local(node), TITLE_WORDS)


def _is_number(node) -> bool:  # noqa: ANN001
    return _named(_local(node), NUMBER_WORDS)


def _named(name: str, words: tuple[str, ...]) -> bool:
    """The name is one of the words, or ends with one of five letters or more ("LukuTunnusKooste"
    ends with "tunnuskooste"; "thead" and "info" end with no word)."""
    return any(name == word or (len(word) >= 5 and name.endswith(word)) for word in words)


def _text(node) -> str:  # noqa: ANN001
    return _SPACE.sub(" ", "".join(node.itertext())).strip()


def _read(root) -> list[Element]:  # noqa: ANN001
    """Headings and paragraphs in document order, by an explicit stack (no recursion)."""
    out: list[Element] = []
    stack = [(root, 0)]  # (node, depth of sections that opened with a heading above it)
    while stack:
        node, depth = stack.pop()
        if not isinstance(node.tag, str) or _local(node) in SKIPPED:
            continue
        children = [child for child in node if isinstance(child.tag, str)]
        if _local(node) in ROWS and children:
            cells = [_text(child) for child in children]
            if any(cells):
                out.append(Element(kind="paragraph", text=" | ".join(cells)))
            continue
        if _own_text(node) or not children:
            if text := _text(node):
                out.append(Element(kind="paragraph", text=text))
            continue
        heading, rest = _heading(children)
        if heading:
            out.append(Element(kind="heading", text=heading, level=min(6, depth + 1)))
        for child in reversed(rest):
            stack.append((child, depth + 1 if heading else depth))
    return out


def _own_text(node) -> bool:  # noqa: ANN001
    return bool((node.text or "").strip() or any((child.tail or "").strip() for child in node))


def _heading(children: list) -> tuple[str, list]:
    """The section's heading (its leading number and title elements, said together) and the rest."""
    taken = 0
    while taken < min(3, len(children)) and (_is_number(children[taken]) or _is_title(children[taken])):
        taken += 1
    parts = [text for child in children[:taken] if (text := _text(child))]
    return (" ".join(parts), children[taken:]) if parts else ("", children)
