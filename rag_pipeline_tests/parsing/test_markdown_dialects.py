"""Documentation-site Markdown read as its site shows it (parsing/markdown_dialects.py):
admonitions of MkDocs, GitHub, Obsidian, Docusaurus, VitePress, Pandoc, MyST and Hugo lead with their title and
keep their body as text (not code), roles and wiki links are their shown text, footnote marks
leave no trace and their notes stay, label lines and struck text are gone; code keeps every marker as written; hostile and huge
input is read in bounded time without recursion errors; a real MyST page of pip's documentation;
a real sync indexes an admonition's words and none of its markers."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import query, search, sync_folder

from rag_pipeline.parsing.config import ParseLimits
from rag_pipeline.parsing.markdown_dialects import MAX_NESTING, as_site_shows
from rag_pipeline.parsing.markdown_direct import parse_markdown_file
from rag_pipeline.parsing.types import Element

DATA = Path(__file__).parent / "data"
MARKERS = ("!!!", "???", "[!", ":::", "[^", "{note}", "{ref}", "{mod}", "{versionadded}", ")=")


def _elements(text: str) -> list[Element]:
    return parse_markdown_file(text.encode("utf-8"), name="page.md", limits=ParseLimits()).elements


def _texts(text: str) -> list[str]:
    return [e.text for e in _elements(text)]


@pytest.mark.parametrize(("text", "texts"), [
    # MkDocs / Python-Markdown: title in quotes, type alone, empty title, collapsible
    ('!!! warning "Back up first"\n    Copy the database before you upgrade.\n',
     ["Back up first: Copy the database before you upgrade."]),
    ("!!! note\n    Keys rotate every 90 days.\n", ["Note: Keys rotate every 90 days."]),
    ('!!! note ""\n    Keys rotate every 90 days.\n', ["Keys rotate every 90 days."]),
    ('???+ tip "Faster builds"\n    Cache the wheels.\n\nAfter.\n', ["Faster builds: Cache the wheels.", "After."]),
    # a body after a blank line was an indented code block before
    ('!!! danger "Data loss"\n\n    Never run it twice.\n\n    It drops the table.\n',
     ["Data loss: Never run it twice.", "It drops the table."]),
    # a body opening with a list keeps its title as a paragraph, the list as list items
    ('!!! info "Supported"\n    - PostgreSQL 16\n    - PostgreSQL 17\n', ["Supported", "PostgreSQL 16", "PostgreSQL 17"]),
    # MkDocs Material content tabs (a body after a blank line was code), snippets, abbreviations
    ('=== "Linux"\n\n    Run the package manager.\n\n=== "Windows"\n    Run the installer.\n',
     ["Linux: Run the package manager.", "Windows: Run the installer."]),
    ('--8<-- "includes/abbreviations.md"\n\nBody.\n\n--8<--\nheader.md\nfooter.md\n--8<--\n', ["Body."]),
    ("The HTML export is on.\n\n*[HTML]: Hyper Text Markup Language\n",
     ["The HTML export is on.", "HTML: Hyper Text Markup Language"]),
    # Jekyll's Liquid tags and Hugo's shortcodes: code tags wrap code, notices admonitions, comments
    # nothing shown; any other tag is no text, what it wraps is; a figure shows its caption
    ('{% include warning.html %}\n\n{% highlight bash %}\nkubectl apply\n{% endhighlight %}\n\n'
     '{% comment %}\nDraft text.\n{% endcomment %}\n\n{% raw %}\nKeep {{ this }}.\n{% endraw %}\n',
     ["kubectl apply", "Keep {{ this }}."]),
    ('{{% notice warning "Do not skip" %}}\nRun the migration first.\n{{% /notice %}}\n\n'
     '{{% notice style="info" %}}\nDeploys are logged.\n{{% /notice %}}\n\n{{< tip >}}\nUse staging.\n{{< /tip >}}\n\n'
     '{{< figure src="a.png" caption="The cluster" >}}\n\nSee {{< ref "home.md" >}} now.\n',
     ["Do not skip: Run the migration first.", "Info: Deploys are logged.", "Tip: Use staging.", "The cluster",
      "See now."]),
    # GitHub alerts
    ("> [!NOTE]\n> Keys rotate every 90 days.\n", ["Note: Keys rotate every 90 days."]),
    ("> [!caution]\n> Do not force-push.\n", ["Caution: Do not force-push."]),
    # Docusaurus, VitePress, Pandoc containers
    (":::tip[Faster builds]\nCache the wheels.\n:::\n", ["Faster builds: Cache the wheels."]),
    ("::: warning Old API\nThe v1 endpoints close in 2027.\n:::\n", ["Old API: The v1 endpoints close in 2027."]),
    ("::: {.note}\nKeys rotate.\n:::\n", ["Note: Keys rotate."]),
    ("::::note\nOuter.\n\n:::tip\nInner.\n:::\n::::\n", ["Note: Outer.", "Tip: Inner."]),
    # MyST directives in fences and colon fences, options left out
    ("```{note}\nKeys rotate every 90 days.\n```\n", ["Note: Keys rotate every 90 days."]),
    ("```{admonition} Retention\n:class: tip\nLogs are kept 30 days.\n```\n", ["Retention: Logs are kept 30 days."]),
    ("```{versionadded} 1.3\nCertificates are verified.\n```\n", ["Added in version 1.3: Certificates are verified."]),
    ("```{deprecated} 2.0 Use the v2 client.\n```\n", ["Deprecated since version 2.0: Use the v2 client."]),
    (":::{seealso}\nThe upgrade guide.\n:::\n", ["See also: The upgrade guide."]),
    ("````{note}\nOuter.\n\n```{warning}\nInner.\n```\n````\n", ["Note: Outer.", "Warning: Inner."]),
    ("```{toctree}\n:maxdepth: 2\n\ninstall\nusage\n```\n\nBody.\n", ["Body."]),
    # roles show their text; a label line is no text
    ("(install)=\n# Install\n\nSee {ref}`the guide <install-guide>` and {mod}`ensurepip`, {pep}`508`.\n",
     ["Install", "See the guide and ensurepip, PEP 508."]),
    ("Call {py:func}`~pkg.module.run` now.\n", ["Call run now."]),
    # Obsidian callouts: any type, a title of their own, folded or not
    ("> [!faq]- How long does approval take?\n> Five working days.\n",
     ["How long does approval take? Five working days."]),
    ("> [!abstract] Summary\n> Costs fell.\n", ["Summary: Costs fell."]),
    # wiki links show their alias, or the page and heading; an embedded file shows nothing
    ("See [[Procurement policy|the procurement policy]], [[Security review#Scope]] and [[Travel]].\n\n![[chart.png]]\n",
     ["See the procurement policy, Security review > Scope and Travel."]),
    # struck text is deleted text (as HTML's <del>); a highlight is its text
    ("The deadline is ~~5 May~~ 7 May. The ==fee is EUR 40== per request.\n",
     ["The deadline is 7 May. The fee is EUR 40 per request."]),
    # footnotes: the mark leaves no trace, the note stays where it was written
    ("Kept 7 years[^1] in the archive[^arch].\n\n[^1]: By law.\n[^arch]: Building B.\n",
     ["Kept 7 years in the archive.", "By law.", "Building B."]),
])
def test_dialect_markup_reads_as_its_site_shows_it(text: str, texts: list[str]) -> None:
    assert _texts(text) == texts


def test_admonitions_and_directive_bodies_are_text_not_code() -> None:
    text = ("# Upgrade\n\n!!! warning\n\n    Stop the workers first.\n\n```{note}\nThen migrate.\n```\n\n"
            "```{code-block} python\n:linenos:\nmigrate()\n```\n")
    kinds = [(e.kind, e.text) for e in _elements(text)]
    assert kinds == [("heading", "Upgrade"), ("paragraph", "Warning: Stop the workers first."),
                     ("paragraph", "Note: Then migrate."), ("code", "migrate()")]


@pytest.mark.parametrize(("text", "kept"), [
    # inside fenced code and code spans every marker is code, as written
    ('```markdown\n!!! note "Title"\n    body\n> [!NOTE]\n:::tip\nx\n:::\n(label)=\nA[^1] {ref}`x`\n```\n\n[^1]: note\n',
     ['!!! note "Title"', "> [!NOTE]", ":::tip", "(label)=", "A[^1] {ref}`x`"]),
    ("Write `!!! note` or `[^1]` or `{ref}` or `~~old~~` or `[[Page]]`.\n\n[^1]: a note\n",
     ["!!! note", "[^1]", "{ref}", "~~old~~", "[[Page]]"]),
    ("~~~\n```{note}\nnot a directive here\n```\n~~~\n", ["```{note}\nnot a directive here"]),
    ("```liquid\n{% highlight ruby %}\nputs 1\n{% endhighlight %}\n{{% notice tip %}}\n```\n",
     ["{% highlight ruby %}\nputs 1\n{% endhighlight %}\n{{% notice tip %}}"]),
])
def test_code_keeps_every_marker(text: str, kept: list[str]) -> None:
    joined = "\n".join(_texts(text))
    for marker in kept:
        assert marker in joined, (marker, joined)


def test_what_only_looks_like_dialect_markup_stays_text() -> None:
    # an unclosed container, a reference to no footnote, an alert marker inside prose, colons, brackets,
    # equals signs and scissors of prose
    text = (":::tip\nNever closed.\n\nA ref[^nowhere] here.\n\nA quote that says [!x] later.\n\nRatio 3:::4 holds.\n\n"
            "The class [[:alnum:]] matches, a == b and x==y hold, ~~ spaced ~~ stays.\n\n"
            "=== not a tab\n\nScissors --8< here and a *[note] in prose.\n\nA {% b and {{< c in prose.\n")
    joined = " ".join(_texts(text))
    for kept in (":::tip", "[^nowhere]", "[!x]", "3:::4", "[[:alnum:]]", "a == b", "x==y", "~~ spaced ~~",
                 "=== not a tab", "--8< here", "*[note]", "A {% b and {{< c in prose."):
        assert kept in joined, kept
    assert as_site_shows("Plain text, nothing to do.\n") == "Plain text, nothing to do.\n"


def test_hostile_and_huge_dialect_markup_is_read_whole() -> None:
    many = '!!! note "T"\n    body words\n\n' * 100_000  # 2.6 MB of admonitions
    out = as_site_shows(many)
    assert "!!!" not in out and out.count("T:\nbody words") == 100_000
    deep = "".join("    " * d + "!!! note\n" for d in range(3_000)) + "    " * 3_000 + "deepest words\n"
    assert "deepest words" in as_site_shows(deep)  # 3,000 levels: no recursion error, nothing lost
    assert as_site_shows(deep).count("Note") == MAX_NESTING  # deeper levels stay as written
    nested = ":::tip\n" * 20_000 + "inside\n" + ":::\n" * 20_000
    assert "inside" in as_site_shows(nested)
    unclosed = ":::tip\nx\n" * 100_000 + "```{note}\n" + "line\n" * 100_000
    assert as_site_shows(unclosed).count(":::tip") == 100_000  # never closed: text
    refs = "word[^1] " * 500_000 + "\n\n[^1]: the note\n"
    out = as_site_shows(refs)
    assert "[^1]" not in out and out.count("word") == 500_000 and "the note" in out
    tags = "{{% notice warning %}}\n" * 50_000 + "text\n{{% /notice %}}\n" + "{% highlight x %}\n" * 50_000
    assert "text" in as_site_shows(tags)  # one closing for 50,000 openers, 50,000 never closed: linear
    for opener in ("~~x ", "==x ", "[^x", "[[x ", "{%x ", "{{<x "):  # openers never closed: each line read once
        line = opener * 25_000
        assert as_site_shows(f"[^1]: a note\n\n{line}\n").endswith(f"\n{line}\n"), opener
    texts = _texts('!!! note "Huge"\n' + "    a sentence of the body.\n" * 50_000)
    assert texts[0].startswith("Huge: a sentence of the body.") and texts[0].count("sentence") == 50_000


def test_a_real_myst_page_of_pips_documentation() -> None:
    data = (DATA / "pip_local_project_installs.md").read_bytes()
    elements = parse_markdown_file(data, name="local-project-installs.md", limits=ParseLimits()).elements
    text = "\n".join(e.text for e in elements)
    for marker in MARKERS:
        assert marker not in text, marker
    assert "(editable-installs)" not in text
    prose = {e.text.split(":")[0] for e in elements if e.kind == "paragraph"}
    assert {"Caution", "Note", "Changed in version 21.3", "Changed in version 22.1"} <= prose
    assert "Specifically, the current machine's filesystem." in [e.text for e in elements if e.kind == "list_item"]
    assert [e.text for e in elements if e.kind == "code"] == ["$ pip install path/to/SomeProject",
                                                             "$ pip install -e path/to/SomeProject"]
    assert "on your computer that you wish to install" in text


def test_a_synced_mkdocs_page_indexes_the_words_not_the_markers(capsys, tmp_path: Path, db_url: str) -> None:
    config = sync_folder(capsys, tmp_path, db_url, {
        "upgrade.md": "# Upgrading the cluster\n\n!!! danger \"Data loss\"\n\n    Never run the reset script on a primary"
                      " node.\n\n> [!IMPORTANT]\n> Snapshots older than 14 days are pruned[^1].\n\n"
                      "[^1]: Pruning runs nightly at 02:00.\n",
        "other.md": "# Holidays\n\nStaff get 25 days of leave a year.\n"})
    texts = [t for (t,) in query(db_url, "SELECT c.text FROM chunks c JOIN document_versions v ON v.id = c.version_id"
                                          " JOIN documents d ON d.id = v.document_id WHERE d.uri = 'upgrade.md'")]
    joined = " ".join(texts)
    assert "Data loss: Never run the reset script on a primary node." in joined
    assert "Important: Snapshots older than 14 days are pruned." in joined and "Pruning runs nightly" in joined
    assert not any(m in joined for m in ("!!!", "[!IMPORTANT]", "[^1]"))
    hits = search(capsys, config, "can I run the reset script on a primary node", "all-staff")
    assert hits and hits[0]["uri"] == "upgrade.md"
