"""How the Markdown documents of ../docs were made from Debian's files (MANIFEST.tsv names each).

    man:  LANG=C.UTF-8 MANWIDTH=100 MANROFFOPT="-rHY=0 -dAD=l" man -E UTF-8 -l PAGE.1.gz | col -bx \
              | python tools/to_markdown.py man "tar(1)" > docs/man-de_tar.md
    text: zcat /usr/share/doc/debian/constitution.txt.gz \
              | python tools/to_markdown.py text "Constitution for the Debian Project (v1.9)" > docs/debian-constitution.md

A rendered man page: its section titles (column 0) become `##` headings, sub-titles (3 spaces)
`###`, wrapped lines of one paragraph or option are joined. A Debian text document: numbered
headings (`1. Introduction`, `  2.1. General rules`, `    A.1.1.`) become headings, list items
(`    1. ...`) start paragraphs, wrapped lines are joined. No word is changed.
"""

from __future__ import annotations

import re
import sys


def _joined(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def from_man(text: str) -> list[str]:
    blocks: list[str] = []
    paragraph: list[str] = []
    for line in text.splitlines()[1:-1]:  # the running header and footer
        if not line.strip() or not line.startswith(" ") or re.match(r"^ {3}\S", line) or re.match(r"^ {7}-", line):
            if paragraph:
                blocks.append(_joined(paragraph))
                paragraph = []
        if not line.strip():
            continue
        if not line.startswith(" "):
            blocks.append("## " + line.strip())
        elif re.match(r"^ {3}\S", line):
            blocks.append("### " + line.strip())
        else:
            paragraph.append(line.strip())
    return blocks + ([_joined(paragraph)] if paragraph else [])


HEADINGS = ((r"^(\d+)\. (\S.*)$", "##"), (r"^  (\d+\.\d+)\. (\S.*)$", "###"), (r"^    (\d+\.\d+\.\d+)\. (\S.*)$", "####"))


def from_text(text: str) -> list[str]:
    blocks: list[str] = []
    paragraph: list[str] = []
    for line in text.splitlines():
        heading = next(((m, mark) for pattern, mark in HEADINGS if (m := re.match(pattern, line))), None)
        rule = not line.strip() or set(line.strip()) <= {"_"}
        if (rule or heading or re.match(r"^ {3,8}(\d+|[a-z])\. ", line)) and paragraph:
            blocks.append(_joined(paragraph))
            paragraph = []
        if heading:
            match, mark = heading
            blocks.append(f"{mark} {match.group(1)}. {match.group(2)}")
        elif not rule:
            paragraph.append(line.strip())
    return blocks + ([_joined(paragraph)] if paragraph else [])


if __name__ == "__main__":
    kind, title = sys.argv[1], sys.argv[2]
    blocks = (from_man if kind == "man" else from_text)(sys.stdin.read())
    print(f"# {title}\n\n" + "\n\n".join(blocks))
