"""Template tags of static-site generators in Markdown source (markdown_dialects.py reads them).

Jekyll pages carry Liquid tags (`{% highlight python %}`, `{% include note.html %}`, `{% raw %}`),
Hugo pages shortcodes (`{{< highlight go >}}`, `{{% notice warning "Title" %}}`, `{{< figure >}}`).
The site replaces each with what it renders, so a tag itself is never text a reader sees: a code
tag wraps code, a notice wraps an admonition, a comment wraps nothing shown, and any other tag
(an include, a condition, a figure) is no text while what it wraps is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_LIQUID = re.compile(r"^[ \t]*\{%-?[ \t]*(\w+)(.*?)[ \t]*-?%\}[ \t]*$")
_HUGO = re.compile(r"^[ \t]*\{\{([<%])[ \t]*(/?)[ \t]*([\w./-]+)(.*?)[ \t]*[>%]\}\}[ \t]*$")
INLINE_TAG = r"\{%-?[^%\n]{0,500}?-?%\}|\{\{[<%][^\n]{0,500}?[>%]\}\}"
CODE = frozenset({"highlight", "code"})
NOTICES = frozenset({"notice", "alert", "callout", "hint", "admonition"})  # the first argument is the type
TYPED = frozenset({"note", "warning", "tip", "info", "danger", "caution", "important"})  # the tag is the type
HIDDEN = frozenset({"comment"})  # what it wraps is not shown
_ATTRIBUTE = re.compile(r"""(\w+)=(?:"([^"]*)"|'([^']*)'|(\S+))""")
_QUOTED = re.compile(r""""([^"]*)"|'([^']*)'""")


@dataclass(frozen=True)
class Tag:
    engine: str  # "liquid" or "hugo"
    name: str  # lower case, without Liquid's "end" or Hugo's "/"
    closing: bool
    args: str


def line_tag(line: str) -> Tag | None:
    """The template tag that is all of `line`, or None."""
    if "{" not in line:
        return None
    if liquid := _LIQUID.match(line):
        name = liquid.group(1).casefold()
        closing = name.startswith("end") and len(name) > 3
        return Tag("liquid", name[3:] if closing else name, closing, liquid.group(2).strip())
    if hugo := _HUGO.match(line):
        return Tag("hugo", hugo.group(3).casefold(), bool(hugo.group(2)), hugo.group(4).strip())
    return None


def closings(lines: list[str]) -> dict[tuple[str, str], list[int]]:
    """Each (engine, name) -> the lines that close such a tag, in order (one pass)."""
    found: dict[tuple[str, str], list[int]] = {}
    for j, line in enumerate(lines):
        if "{" in line and (tag := line_tag(line)) is not None and tag.closing:
            found.setdefault((tag.engine, tag.name), []).append(j)
    return found


def closing_after(found: dict[tuple[str, str], list[int]], tag: Tag, i: int) -> int | None:
    """The first line after line i that closes `tag`, or None (an unclosed tag wraps nothing)."""
    ends = found.get((tag.engine, tag.name), [])
    k = bisect_right(ends, i)
    return ends[k] if k < len(ends) else None


def code_language(tag: Tag) -> str:
    words = tag.args.split()
    return words[0].strip("\"'") if words and "=" not in words[0] else ""


def caption(tag: Tag) -> str:
    """A figure's caption (or title), as the page shows it under the image."""
    attributes = _attributes(tag)
    return attributes.get("caption") or attributes.get("title") or ""


def _attributes(tag: Tag) -> dict[str, str]:
    return {m.group(1).casefold(): next(g for g in m.groups()[1:] if g is not None) for m in _ATTRIBUTE.finditer(tag.args)}


def notice_title(tag: Tag) -> str:
    """What a notice shows above its text: its title (an attribute, or the quoted argument after
    its type), else its type ("Warning")."""
    attributes = _attributes(tag)
    if attributes.get("title"):
        return attributes["title"]
    rest = _ATTRIBUTE.sub("", tag.args).strip()
    quoted = _QUOTED.search(rest)
    if quoted:
        return next(g for g in quoted.groups() if g is not None)
    if tag.name in NOTICES:
        kind = attributes.get("style") or attributes.get("type") or (rest.split() or [""])[0]
        words = rest.split()[1:]
        title = " ".join(words)
        return title or kind.replace("-", " ").capitalize()
    return rest or tag.name.capitalize()
