"""Documentation-site Markdown written as its site shows it, before python-markdown reads it.

Company documentation is mostly written for a site generator, each with its own extensions of
Markdown that python-markdown's core (tables, fenced_code: unstructured's settings) does not know:
- MkDocs / Python-Markdown admonitions: `!!! warning "Title"` (`???`, `???+` collapsible) over an
  indented body;
- GitHub alerts: a quote opening with `[!NOTE]` (NOTE, TIP, IMPORTANT, WARNING, CAUTION);
- Docusaurus and VitePress containers, Pandoc fenced divs, MyST colon fences: `:::tip Title` or
  `:::{note}` ... `:::`;
- MyST (Sphinx) directives in fences (```` ```{note} ````, ```` ```{code-block} python ````), roles
  (``{ref}`the title <target>` ``, ``{mod}`ensurepip` ``) and target labels (`(install)=`);
- footnotes: `text[^1]` and `[^1]: the note`;
- MkDocs Material's content tabs (`=== "Linux"` over an indented body), pymdownx snippets
  (`--8<-- "file.md"`: a file the site includes, no text of this one) and abbreviations
  (`*[HTML]: Hyper Text Markup Language`: a tooltip, kept as a list item);
- Obsidian and wiki notes: callouts (`> [!faq]- Title`: any type, a title of their own), wiki
  links (`[[Page|alias]]`, `[[Page#Heading]]`, embeds `![[file]]`), highlights (`==text==`);
- GitHub's strikethrough (`~~text~~`): deleted text, dropped as HTML's <del> is;
- Jekyll's Liquid tags and Hugo's shortcodes (`{% highlight %}`, `{{% notice warning %}}`):
  markdown_templates.py.
Read as plain Markdown their markers were indexed as words ("!!! warning", "[!NOTE]", "[^1]",
"{mod}"), an admonition's body after a blank line and a ```` ```{note} ```` became code, and a
label line a paragraph of its own. Each now reads as the site shows it: an admonition's title (or
its type) leads its body, an alert's type labels its text, a role is its shown text, a footnote
reference leaves no mark and its note is a list item where it was written, a label line is gone,
a wiki link is the text it shows, struck text is not indexed.
Text inside fenced code and inline code spans is code and stays as written; a container without
its closing line stays text. One pass over the lines, each body read once (huge files stay linear).
"""

from __future__ import annotations

import re

from rag_pipeline.parsing import markdown_templates as templates

MAX_NESTING = 16  # admonitions and containers read inside each other; deeper ones stay as written
_MARKS = re.compile(r"(?m)^(?:!!!|\?\?\?|===|[ \t]*-+8<|\*\[|[ \t>]*\[![A-Za-z]+\]|\s*:::|\s{0,3}(?:`{3,}|~{3,})\s*\{|\(\S+\)=\s*$)"
                    r"|\[\^[^\[\]\s]+\]|\{[A-Za-z][\w:.+-]*\}`|\[\[|~~[^\s~]|==[^\s=]|\{%|\{\{[<%]")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*(.*?)[ \t]*$")
_DIRECTIVE = re.compile(r"^\{([A-Za-z][\w:.+-]*)\}[ \t]*(.*)$")
_ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)((?:[ \t]+[\w-]+)*)(?:[ \t]+"(.*?)")?[ \t]*$')
_TAB = re.compile(r'^===[!+]?[ \t]+"(.*?)"[ \t]*$')  # MkDocs Material's content tab, its label quoted
_SNIPPET = re.compile(r"^[ \t]*-{1,}8<-{1,}[ \t]*(?:\S.*)?$")  # pymdownx.snippets: a file included by the site
_ABBREVIATION = re.compile(r"^\*\[([^\]\n]+)\]:[ \t]*(.*)$")
_CONTAINER = re.compile(r"^ {0,3}(:{3,})[ \t]*(\S.*?)[ \t]*$")
_CONTAINER_END = re.compile(r"^ {0,3}(:{3,})[ \t]*$")
_CONTAINER_INFO = re.compile(r"^\{?\.?([\w-]+)\}?(?:[ \t]*\[(.*)\]|[ \t]+(.*))?$")
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]?(.*)$")
_FOOTNOTE_LABELS = re.compile(r"(?m)^ {0,3}\[\^([^\]\s]+)\]:")
_LABEL = re.compile(r"^ {0,3}\([\w:./-]+\)=[ \t]*$")
_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_PLAIN_START = re.compile(r"^ {0,3}[^\s#>*+=|<`~:!-]")  # a line that would continue a paragraph
_NUMBERED = re.compile(r"^ {0,3}\d{1,9}[.)](?:\s|$)")
# Spans are bounded (SPAN characters): an opener never closed costs a bounded scan, not the rest of
# its line (a line of 25,000 unclosed "~~x" took 21 s); a longer span stays as written. Struck and
# highlighted text stops at the next "~~" or "==" (they do not nest), so such a line is read once.
SPAN = 500
_SPAN = rf".{{1,{SPAN}}}?"
_INLINE = re.compile(
    r"(?P<role>\{(?P<name>[A-Za-z][\w:.+-]*)\}(?P<rt>`+)(?P<shown>"
    + _SPAN + r")(?P=rt)(?!`))"
    r"|(?P<code>(?P<ct>`+)" + _SPAN + r"(?P=ct)(?!`))"
    r"|(?P<ref>\[\^(?P<label>[^\[\]\s]+)\](?!:))"
    r"|^(?P<quote>[ \t]{0,3}(?:>[ \t]?)+)\[!(?P<alert>[A-Za-z][\w-]*)\][+-]?(?:[ \t]+(?P<alert_title>.*?))?[ \t]*$"
    r"|(?P<wiki>(?P<embed>!?)\[\[(?P<page>(?![:\s])[^\[\]|#\n]*)(?:#(?P<anchor>[^\[\]|\n]*))?(?:\|(?P<alias>[^\[\]\n]*))?\]\])"
    r"|(?P<struck>(?<!~)~~(?=[^\s~])(?P<struck_text>(?:(?!~~).)" + _SPAN[1:] + r")(?<=[^\s~])~~(?!~))"
    r"|(?P<mark>(?<![=\w])==(?=[^\s=])(?P<mark_text>(?:(?!==).)" + _SPAN[1:] + r")(?<=[^\s=])==(?![=\w]))"
    r"|(?P<tag>" + templates.INLINE_TAG + r")"
)
# What a line must hold for _INLINE to change it (code spans only guard the rest): most lines hold
# none and cost a few substring scans instead of the alternation at every character
_INLINE_TRIGGERS = ("[^", "[!", "~~", "==", "{%", "{{<", "{{%", "}`")  # and a wiki link's "[[" with "]]"
# A line that starts none of the block constructs _one reads (fences, admonitions, tabs, snippets,
# abbreviations, containers, footnotes, labels, template tags) goes straight to _inline
_BLOCK_START = re.compile(r"[ \t]*[`~!?=\-*:\[({]")
_CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "code-cell"})
_DROPPED_DIRECTIVES = frozenset({"toctree", "contents", "image", "include", "literalinclude", "raw", "only", "meta"})
_TITLED_DIRECTIVES = frozenset({"admonition", "sidebar", "topic", "dropdown", "details", "figure", "table"})
_ADMONITIONS = frozenset({
    "attention", "caution", "danger", "error", "hint", "important", "note", "seealso", "tip", "warning", "todo",
    "info", "success", "secondary", "abstract", "summary", "question", "example", "quote", "bug", "failure",
})
_NUMBERED_ROLES = {"pep": "PEP", "rfc": "RFC"}
_VERSIONED = {"versionadded": "Added in version", "versionchanged": "Changed in version",
              "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}


def as_site_shows(text: str) -> str:
    """`text` with the dialect markup above written as its site shows it; a text without any is
    returned as it is (the common case costs one regex search)."""
    if not _MARKS.search(text):
        return text
    labels = frozenset(label.casefold() for label in _FOOTNOTE_LABELS.findall(text))
    return "\n".join(_Blocks(labels).read(text.split("\n")))


def as_paragraph(prose: str) -> str:
    """`prose` as one Markdown paragraph that reads as written ("# 1" or "- item" at its start is
    not a heading or a list)."""
    return re.sub(r"^([#>*+=-]|\d+[.)])", r"\\\1", " ".join(prose.split()))


class _Blocks:
    """The rewrite, line by line: blocks, then each line outside code (`_inline`); `labels`: the
    footnotes the text defines (a reference to none stays as written, as sites show it)."""

    def __init__(self, labels: frozenset[str]) -> None:
        self.labels = labels
        self.depth = 0

    def read(self, lines: list[str]) -> list[str]:
        """`lines` rewritten; below MAX_NESTING levels of blocks the rest is read as written."""
        if self.depth >= MAX_NESTING:
            return lines
        self.depth += 1
        out: list[str] = []
        ends = _container_ends(lines)
        tags = templates.closings(lines)
        i = 0
        while i < len(lines):
            i = self._one(lines, i, ends, tags, out)
        self.depth -= 1
        return out

    def _one(self, lines: list[str], i: int, ends: dict[int, int], tags: dict[tuple[str, str], list[int]],
             out: list[str]) -> int:
        """Rewrite the construct starting at line i into `out`; the index after it."""
        line = lines[i]
        if not _BLOCK_START.match(line):
            out.append(_inline(line, self.labels))
            return i + 1
        if fence := _FENCE.match(line):
            return self._fenced(lines, i, fence, out)
        if (tag := templates.line_tag(line)) is not None:
            return self._template(lines, i, tag, tags, out)
        if (admonition := _ADMONITION.match(line)) or (tab := _TAB.match(line)):
            end = _indented_end(lines, i + 1)
            body = [_dedent(x) for x in lines[i + 1:end]]
            if admonition:
                kind, title = admonition.group(1), admonition.group(3)
                self._titled(title if title is not None else _title_case(kind), body, out)
            else:  # a content tab: its label leads its body, as the tab shows it
                self._titled(tab.group(1), body, out)
            return end
        if _SNIPPET.match(line):
            return _snippet_end(lines, i)
        if abbreviation := _ABBREVIATION.match(line):  # shown as a tooltip; what it expands to is text
            out.extend(["", f"- {abbreviation.group(1).strip()}: {_inline(abbreviation.group(2), self.labels)}"])
            return i + 1
        if i in ends and (container := _CONTAINER.match(line)):
            self._container(container.group(2), lines[i + 1:ends[i]], out)
            return ends[i] + 1
        if footnote := _FOOTNOTE_DEF.match(line):
            out.extend(["", f"- {_inline(footnote.group(2), self.labels)}"])
            return i + 1
        if not _LABEL.match(line):
            out.append(_inline(line, self.labels))
        return i + 1

    def _template(self, lines: list[str], i: int, tag: templates.Tag, tags: dict[tuple[str, str], list[int]],
                  out: list[str]) -> int:
        """A line that is one template tag (markdown_templates.py): the tag is no text; a code tag
        wraps code, a notice an admonition, a comment nothing shown; any other wraps text."""
        end = None if tag.closing else templates.closing_after(tags, tag, i)
        if tag.name == "figure" and (caption := templates.caption(tag)):
            out.extend(["", as_paragraph(caption), ""])  # what the figure shows in words
        if end is None:
            return i + 1
        if tag.name in templates.CODE:
            out.extend([f"```{templates.code_language(tag)}", *lines[i + 1:end], "```"])
        elif tag.name in templates.HIDDEN:
            pass
        elif tag.name in templates.NOTICES or tag.name in templates.TYPED:
            self._titled(templates.notice_title(tag), lines[i + 1:end], out)
        else:
            return i + 1  # an include, a condition, a figure: its own line is no text, what it wraps is
        return end + 1

    def _fenced(self, lines: list[str], i: int, fence: re.Match[str], out: list[str]) -> int:
        """A fenced block: code as written, or a MyST directive read by its name."""
        mark = fence.group(2)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == mark), len(lines))
        body = lines[i + 1:end]
        directive = _DIRECTIVE.match(fence.group(3))
        if directive is None:
            out.extend(lines[i:end + 1])
        else:
            self._directive(directive.group(1).casefold(), directive.group(2), body, mark, out)
        return end + 1

    def _container(self, info: str, body: list[str], out: list[str]) -> None:
        """`:::` containers: MyST's `:::{note}` is a directive; Docusaurus' `:::tip[Title]`,
        VitePress' `::: tip Title` and Pandoc's `::: {.note}` are admonitions by their type."""
        directive = _DIRECTIVE.match(info)
        if directive is not None:
            self._directive(directive.group(1).casefold(), directive.group(2), body, "```", out)
            return
        parts = _CONTAINER_INFO.match(info)
        kind = parts.group(1).casefold() if parts else ""
        title = (parts.group(2) or parts.group(3)) if parts else None
        shown = title or (_title_case(kind) if kind in _ADMONITIONS or kind in {"details"} else None)
        self._titled(shown, body, out)

    def _directive(self, name: str, argument: str, body: list[str], mark: str, out: list[str]) -> None:
        body = _without_options(body)
        if name in _CODE_DIRECTIVES:
            out.extend([f"{mark}{argument.split()[0] if argument.split() else ''}", *body, mark])
        elif name in _DROPPED_DIRECTIVES:
            return
        elif name in _VERSIONED:
            version, _, rest = argument.partition(" ")
            self._titled(f"{_VERSIONED[name]} {version}".strip(), [rest, *body] if rest else body, out)
        elif name in _TITLED_DIRECTIVES:
            self._titled(argument or (_title_case(name) if name == "admonition" else None), body, out)
        elif name in _ADMONITIONS:
            self._titled("See also" if name == "seealso" else _title_case(name), [argument, *body] if argument else body, out)
        else:  # a site's own directive ({pip-cli}, {eval-rst}): shown as the code block it was read as
            out.extend([mark, *body, mark])

    def _titled(self, title: str | None, body: list[str], out: list[str]) -> None:
        """A titled block: the title leads its body's first paragraph ("Back up first: copy the
        database ...") or stands as a paragraph before a body that opens with a list, heading or
        code; the body is read as Markdown itself (admonitions nest)."""
        inner = self.read(body)
        while inner and not inner[0].strip():
            inner = inner[1:]
        first = inner[0] if inner else ""
        out.append("")
        if title and title.strip():
            shown = as_paragraph(_inline(title, self.labels))
            joins = bool(_PLAIN_START.match(first)) and not _NUMBERED.match(first)
            out.append(shown if shown[-1] in ".:?!" or not joins else f"{shown}:")
            if not joins:
                out.append("")
        out.extend(inner)
        out.append("")


def _inline(line: str, labels: frozenset[str]) -> str:
    """A line's roles, footnote references and alert marker rewritten; code spans untouched."""

    def rewritten(match: re.Match[str]) -> str:
        if match.group("role"):
            return f"{match.group('rt')}{_shown(match.group('name').casefold(), match.group('shown'))}{match.group('rt')}"
        if match.group("ref"):
            return "" if match.group("label").casefold() in labels else match.group(0)
        if match.group("alert"):
            title = (match.group("alert_title") or "").strip() or _title_case(match.group("alert"))
            return f"{match.group('quote')}{title}{'' if title[-1] in '.:?!' else ':'}"
        if match.group("wiki") is not None:
            return _wiki_shown(match)
        if match.group("struck"):  # deleted text, as <del> in HTML: shown struck through, not indexed
            return f"<del>{match.group('struck_text')}</del>"
        if match.group("mark"):
            return match.group("mark_text")
        if match.group("tag"):  # a template tag inside a line: what the site puts there is unknown, no text
            return ""
        return match.group(0)

    may_change = any(t in line for t in _INLINE_TRIGGERS) or ("[[" in line and "]]" in line)
    return _INLINE.sub(rewritten, line) if may_change else line


def _wiki_shown(match: re.Match[str]) -> str:
    """What a wiki link shows (Obsidian, Foam, GitHub wikis): its alias, else the page and the
    heading it points into ("Page > Heading"); an embedded file (`![[diagram.png]]`) shows no text."""
    if match.group("embed"):
        return ""
    alias = (match.group("alias") or "").strip()
    if alias:
        return alias
    page, anchor = match.group("page").strip(), (match.group("anchor") or "").strip().lstrip("^")
    return " > ".join(part for part in (page, anchor) if part)


def _shown(name: str, role_text: str) -> str:
    """What Sphinx shows of a role's text: "title <target>" shows the title, "~a.b.c" its last
    part, "!target" the target unlinked, {pep}`8` "PEP 8"."""
    explicit = re.match(r"^(.*?)\s*<[^<>]+>$", role_text, re.DOTALL)
    if explicit and explicit.group(1):
        return explicit.group(1)
    if name in _NUMBERED_ROLES:
        return f"{_NUMBERED_ROLES[name]} {role_text}"
    if role_text.startswith("~"):
        return role_text[1:].rsplit(".", 1)[-1]
    return role_text.removeprefix("!")


def _title_case(kind: str) -> str:
    return kind.replace("-", " ").replace("_", " ").capitalize()


def _dedent(line: str) -> str:
    return line[1:] if line.startswith("\t") else line[4:] if line.startswith("    ") else line.lstrip(" ")


def _indented_end(lines: list[str], i: int) -> int:
    """The end of an indented body starting at line i: indented lines and the blank lines between
    them (blank lines after the last indented one are not the body's)."""
    end = i
    for j in range(i, len(lines)):
        if _INDENTED.match(lines[j]) and lines[j].strip():
            end = j + 1
        elif lines[j].strip():
            break
    return end


def _snippet_end(lines: list[str], i: int) -> int:
    """The line after a snippet include at line i: its own line, or (a bare `--8<--` opening a
    block of file names) up to the block's closing `--8<--`, when there is one before a blank line."""
    if lines[i].strip().strip("-8<"):
        return i + 1
    for j in range(i + 1, min(len(lines), i + 1 + 100)):
        if _SNIPPET.match(lines[j]):
            return j + 1
        if not lines[j].strip():
            break
    return i + 1


def _container_ends(lines: list[str]) -> dict[int, int]:
    """Each `:::` container's opening line -> its closing line (a line of colons only, matched
    innermost first, in one pass); an opening never closed is not a container but text."""
    ends: dict[int, int] = {}
    opened: list[int] = []
    fence = None  # the mark closing the fenced code being read: its lines are code
    for j, line in enumerate(lines):
        if fence is not None:
            fence = None if line.strip() == fence else fence
        elif (opening := _FENCE.match(line)) is not None:
            fence = opening.group(2)
        elif ":::" not in line:
            continue
        elif _CONTAINER_END.match(line):
            if opened:
                ends[opened.pop()] = j
        elif _CONTAINER.match(line):
            opened.append(j)
    return ends


def _without_options(body: list[str]) -> list[str]:
    """A directive's body without its options (`:name: value` lines or a `---` YAML block first)."""
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
        if end is not None:
            return body[end + 1:]
    i = 0
    while i < len(body) and _OPTION.match(body[i]):
        i += 1
    return body[i:]
