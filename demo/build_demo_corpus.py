#!/usr/bin/env python
"""Build the binary documents of the Larkspur Logistics demo corpus (PDF, DOCX) from text held here.

Usage (from the repository root, with the project's virtual environment active):

    python demo/build_demo_corpus.py           # (re)write the PDFs and the DOCX
    python demo/build_demo_corpus.py --check   # rebuild in memory, compare with the committed
                                               # files, and check every eval.yaml evidence phrase

The output is byte-for-byte reproducible (fixed PDF metadata and /ID, fixed ZIP timestamps), so
re-running the script leaves checksums unchanged and a sync sees no change.

Text documents (Markdown, HTML) and the `_access.yaml` files are plain files under demo/docs/ and
are edited by hand; this script only reads them for `--check`.

Written files:
    docs/policies/travel-policy.pdf     travel policy, version 1 (3+ pages, running header, table)
    versions/travel-policy.v2.pdf       travel policy, version 2 (copied over v1 by the demo flow)
    docs/hr/salaries-2026.pdf           CONFIDENTIAL salary bands (group hr only)
    docs/policies/remote-work.docx      remote work policy (Heading 1/2, lists, table, header/footer)
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import docx
import pymupdf
import yaml
from docx.shared import Pt

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
VERSIONS = HERE / "versions"

COMPANY = "Larkspur Logistics"
PDF_DATE = "D:20260101090000+01'00'"
PDF_DATE_V2 = "D:20260501090000+02'00'"
DOCX_DATE = dt.datetime(2026, 1, 1, 9, 0, 0)
ZIP_DATE = (2026, 1, 1, 9, 0, 0)

# --------------------------------------------------------------------------------------------
# Document text. Facts used by eval.yaml are written on one line of source text each and avoid
# hyphens at possible line ends; keep them that way when editing.
# --------------------------------------------------------------------------------------------

# Blocks: ("title", text), ("subtitle", text), ("h", text), ("p", text), ("li", text),
# ("table", header_row, rows, column_widths), ("pagebreak",)


def travel_policy(version: int) -> list[tuple]:
    v2 = version == 2
    berlin_hotel = "165" if v2 else "140"
    approver = (
        "the head of department and by the finance director"
        if v2
        else "the head of department"
    )
    blocks: list[tuple] = [
        ("title", "Travel Policy"),
        (
            "subtitle",
            "Version 2, effective 1 May 2026. Owner: Finance."
            if v2
            else "Version 1, effective 1 January 2026. Owner: Finance.",
        ),
        ("h", "1 Scope"),
        (
            "p",
            "This policy applies to all employees of Larkspur Logistics GmbH and to contractors "
            "who travel at the company's expense. It covers business trips within Germany and "
            "abroad, including customer visits, carrier audits, port inspections and trade fairs. "
            "Daily commuting between home and your usual place of work is not a business trip and "
            "is not covered by this policy.",
        ),
        (
            "p",
            "The aim of the policy is simple: employees should travel safely and comfortably, and "
            "the company should pay a fair price for it. When in doubt, choose the option that a "
            "careful business traveller would choose if they were paying for the trip themselves. "
            "Line managers are expected to check that a trip is necessary before approving it; a "
            "video call is often enough for a routine meeting with a carrier or a customer.",
        ),
        (
            "p",
            "The Finance department owns this policy and reviews it once a year. Questions about "
            "the policy go to the travel desk; questions about a specific expense claim go to "
            "Accounts Payable.",
        ),
        ("h", "2 Approval"),
        (
            "p",
            "Every business trip needs approval before any ticket or hotel is booked. A trip within "
            "Germany is approved by the employee's line manager through the travel request form "
            "on the intranet.",
        ),
        ("p", f"A business trip abroad must be approved in advance by {approver}."),
        (
            "p",
            "Travel requests must be submitted at least ten working days before departure, so that "
            "the travel desk can book at reasonable prices. Shorter notice is accepted for urgent "
            "customer issues, such as a damaged shipment or a blocked customs clearance, when the "
            "request states the reason.",
        ),
        (
            "p",
            "Costs of a trip that was booked without approval are not reimbursed. Approval covers "
            "the dates, the destination and the estimated budget in the request; if the trip is "
            "extended by more than one night, a new approval is needed.",
        ),
        ("h", "3 Per diem rates"),
        (
            "p",
            "Per diem allowances cover meals and small incidental costs such as tips and local "
            "phone calls. The hotel cap is the highest nightly room rate, including breakfast, "
            "that the company pays without further approval. The rates in the table below apply "
            "to the cities our staff visit most often.",
        ),
        (
            "table",
            ["City", "Hotel cap (EUR)", "Meals per day (EUR)"],
            [
                ["Berlin", berlin_hotel, "42"],
                ["Hamburg", "135", "42"],
                ["Munich", "160", "45"],
                ["Frankfurt", "150", "44"],
                ["Rotterdam", "150", "44"],
                ["Antwerp", "130", "40"],
                ["Warsaw", "110", "35"],
                ["Milan", "155", "45"],
                ["London", "190", "52"],
            ],
            [170, 135, 145],
        ),
        (
            "p",
            "For cities that are not listed, the hotel cap is EUR 120 per night and meals are "
            "reimbursed at EUR 38 per day.",
        ),
        (
            "p",
            "If a meal is provided during the trip, for example by a customer or at a conference, "
            "the meals allowance for that day is reduced by 20 percent for breakfast and by 40 "
            "percent each for lunch and dinner. Hotel rates above the cap need the written consent "
            "of the travel desk before booking, for instance during trade fair weeks when prices "
            "rise everywhere in the city.",
        ),
        ("h", "4 Expenses"),
        (
            "p",
            "Travel costs are reimbursed as they actually occur, within the limits below. Please "
            "keep every original receipt; a card statement alone is not accepted as proof of "
            "payment.",
        ),
        ("li", "Flights: economy class for flights shorter than six hours."),
        ("li", "Premium economy may be booked for flights longer than six hours."),
        ("li", "Rail: second class; first class is allowed for journeys of more than four hours."),
        ("li", "Private car: a mileage allowance of EUR 0.30 per kilometre driven."),
        ("li", "Taxis: only when no reasonable public transport is available."),
        (
            "p",
            "Receipts must be uploaded to the expense tool within 30 days of returning from the "
            "trip. Claims that arrive later are only paid with the approval of the head of "
            "Finance. Advances for long trips can be requested from Accounts Payable at least one "
            "week before departure.",
        ),
        (
            "p",
            "The following are never reimbursed: alcohol, minibar items, traffic and parking fines, "
            "personal entertainment, upgrades paid with private money, and costs of people who "
            "accompany the employee privately.",
        ),
        ("h", "5 Booking"),
        (
            "p",
            "All flights, trains and hotels are booked through the company travel agency, Halcyon "
            "Travel, which can be reached through the travel desk on extension 2240. Bookings made "
            "privately on other websites are only reimbursed if they are cheaper than the offer "
            "of the agency for the same trip.",
        ),
        (
            "p",
            "Rental cars are booked in the compact category unless three or more employees travel "
            "together or heavy sample equipment has to be carried. Please return rental cars with "
            "a full tank; refuelling charges of the rental company are not reimbursed.",
        ),
        (
            "p",
            "Loyalty points collected on business trips may be kept by the employee, but they must "
            "never influence the choice of airline, hotel or route.",
        ),
        ("h", "6 Safety and insurance"),
        (
            "p",
            "Every employee on a business trip is covered by the company travel insurance, which "
            "includes medical treatment abroad, repatriation and lost luggage. The insurance card "
            "is available from the travel desk and in the intranet.",
        ),
        (
            "p",
            "Before travelling to a country with a travel warning of the Federal Foreign Office, "
            "the employee registers the trip with the travel desk and agrees on a daily check in "
            "with the line manager. In an emergency abroad, call the 24 hour assistance number "
            "printed on the insurance card first, then inform your line manager.",
        ),
        ("h", "7 Exceptions and contacts"),
        (
            "p",
            "Exceptions to this policy must be requested in writing before the trip and approved "
            "by the head of Finance. Exceptions that were not approved in advance are treated as "
            "private costs.",
        ),
        (
            "p",
            "Contacts: travel desk, extension 2240; Accounts Payable, extension 2250; "
            "Halcyon Travel emergency line, printed on your booking confirmation.",
        ),
    ]
    if v2:
        blocks += [
            ("h", "8 Changes in this version"),
            (
                "p",
                "Version 2 raises the Berlin hotel cap and adds the finance director to the "
                "approval of business trips abroad. All other rules are unchanged.",
            ),
        ]
    return blocks


def salaries() -> list[tuple]:
    return [
        ("title", "Salary Bands 2026"),
        ("subtitle", "CONFIDENTIAL. Distribution: Human Resources only."),
        ("h", "1 Purpose"),
        (
            "p",
            "This document sets out the annual gross salary bands of Larkspur Logistics for the "
            "year 2026. HR uses the bands for job offers, promotions and the annual review. The "
            "bands must not be shared with line managers or employees outside HR; managers receive "
            "the band of a position on request for a specific hiring decision.",
        ),
        ("h", "2 Salary bands"),
        (
            "p",
            "Amounts are annual gross base salaries for full time positions, before bonus. Part "
            "time salaries are calculated pro rata.",
        ),
        (
            "table",
            ["Position", "Band", "Annual salary (EUR)"],
            [
                ["Warehouse operative", "W1", "32,000 - 36,000"],
                ["Forklift driver", "W2", "35,000 - 39,000"],
                ["Shift supervisor", "W3", "44,000 - 50,000"],
                ["Warehouse manager", "M2", "58,000 - 64,000"],
                ["Customs specialist", "P2", "48,000 - 55,000"],
                ["Freight forwarder", "P2", "46,000 - 53,000"],
                ["Sales account manager", "P3", "52,000 - 60,000"],
                ["Head of department", "M4", "85,000 - 98,000"],
            ],
            [200, 70, 180],
        ),
        (
            "p",
            "New hires are normally placed in the lower half of their band. A starting salary in "
            "the upper half of a band needs the approval of the HR director.",
        ),
        ("h", "3 Reviews and bonuses"),
        (
            "p",
            "Salary bands are reviewed every April against the logistics industry benchmark and "
            "the collective agreement for the freight forwarding sector.",
        ),
        (
            "p",
            "Employees in M bands are eligible for an annual bonus of up to 10 percent of base "
            "salary, based on the results of their site. Employees in W and P bands receive the "
            "company profit share, which is announced together with the annual accounts.",
        ),
    ]


# --------------------------------------------------------------------------------------------
# PDF writer: single column, A4, base-14 Helvetica, manual word wrap (breaks at spaces only,
# never hyphenates), tables drawn with ruling lines so PyMuPDF find_tables() detects them.
# --------------------------------------------------------------------------------------------

A4_W, A4_H = 595.0, 842.0
MARGIN_X = 72.0
TOP = 88.0
BOTTOM = A4_H - 80.0
BODY = ("helv", 11.0, 16.0)  # font, size, line height
HEADING = ("hebo", 14.0, 20.0)
TITLE = ("hebo", 22.0, 28.0)
SUBTITLE = ("helv", 10.0, 14.0)
GREY = (0.35, 0.35, 0.35)


def _wrap(text: str, font: str, size: float, width: float) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and pymupdf.get_text_length(candidate, fontname=font, fontsize=size) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


class PdfBuilder:
    def __init__(self, header: str, title: str, date: str) -> None:
        self.doc = pymupdf.open()
        self.header = header
        self.title = title
        self.date = date
        self.page: pymupdf.Page | None = None
        self.y = TOP

    def _new_page(self) -> None:
        self.page = self.doc.new_page(width=A4_W, height=A4_H)
        self.y = TOP

    def _ensure(self, height: float) -> None:
        if self.page is None or self.y + height > BOTTOM:
            self._new_page()

    def _line(self, text: str, font: tuple, x: float = MARGIN_X, color: tuple[float, float, float] = (0, 0, 0)) -> None:
        name, size, lh = font
        self._ensure(lh)
        self.page.insert_text((x, self.y + size), text, fontname=name, fontsize=size, color=color)
        self.y += lh

    def add(self, block: tuple) -> None:
        kind = block[0]
        width = A4_W - 2 * MARGIN_X
        if kind == "title":
            self._ensure(TITLE[2] + 40)
            self._line(block[1], TITLE)
        elif kind == "subtitle":
            self._line(block[1], SUBTITLE, color=GREY)
            self.y += 14
        elif kind == "h":
            # keep a heading together with at least three lines of what follows
            self._ensure(HEADING[2] + 8 + 3 * BODY[2])
            self.y += 8
            self._line(block[1], HEADING)
            self.y += 2
        elif kind == "p":
            for line in _wrap(block[1], BODY[0], BODY[1], width):
                self._line(line, BODY)
            self.y += 7
        elif kind == "li":
            indent = 16.0
            lines = _wrap(block[1], BODY[0], BODY[1], width - indent)
            self._ensure(BODY[2])
            self.page.insert_text(
                (MARGIN_X + 4, self.y + BODY[1]), "-", fontname=BODY[0], fontsize=BODY[1]
            )
            for line in lines:
                self._line(line, BODY, x=MARGIN_X + indent)
            self.y += 3
        elif kind == "table":
            self._table(block[1], block[2], block[3])
        elif kind == "pagebreak":
            self._new_page()
        else:
            raise ValueError(f"unknown block kind {kind!r}")

    def _table(self, header: list[str], rows: list[list[str]], widths: list[float]) -> None:
        # Cell text is 11 pt: at 10 pt the space advance of Helvetica (2.8 pt) is under the 3 pt
        # x-tolerance of PyMuPDF's table text extraction and header names lose their spaces.
        # The gap above the table is more than a line height, or find_tables() takes the
        # paragraph above for an external column header.
        row_h = 22.0
        total_h = row_h * (len(rows) + 1)
        self._ensure(total_h + 30)  # a table is never split across pages
        self.y += 18
        page, x0, y0 = self.page, MARGIN_X, self.y
        x_edges = [x0]
        for w in widths:
            x_edges.append(x_edges[-1] + w)
        shape = page.new_shape()
        for i in range(len(rows) + 2):
            y = y0 + i * row_h
            shape.draw_line((x_edges[0], y), (x_edges[-1], y))
        for x in x_edges:
            shape.draw_line((x, y0), (x, y0 + total_h))
        shape.finish(color=(0, 0, 0), width=0.6)
        shape.commit()
        for r, row in enumerate([header] + rows):
            font = "hebo" if r == 0 else "helv"
            baseline = y0 + r * row_h + 15
            for c, cell in enumerate(row):
                page.insert_text((x_edges[c] + 6, baseline), cell, fontname=font, fontsize=11)
        self.y = y0 + total_h + 16

    def finish(self) -> bytes:
        n = len(self.doc)
        for number, page in enumerate(self.doc, start=1):
            page.insert_text((MARGIN_X, 50), self.header, fontname="helv", fontsize=9, color=GREY)
            page.draw_line((MARGIN_X, 58), (A4_W - MARGIN_X, 58), color=GREY, width=0.5)
            footer = f"Page {number} of {n}"
            fw = pymupdf.get_text_length(footer, fontname="helv", fontsize=9)
            page.insert_text(((A4_W - fw) / 2, A4_H - 42), footer, fontname="helv", fontsize=9, color=GREY)
        self.doc.set_metadata(
            {
                "title": self.title,
                "author": COMPANY,
                "subject": "",
                "keywords": "",
                "creator": "demo/build_demo_corpus.py",
                "producer": "PyMuPDF",
                "creationDate": self.date,
                "modDate": self.date,
            }
        )
        buf = io.BytesIO()
        self.doc.save(buf, garbage=4, deflate=True, no_new_id=True, reproducible=True)
        return buf.getvalue()


def build_pdf(blocks: list[tuple], header: str, title: str, date: str) -> bytes:
    builder = PdfBuilder(header, title, date)
    for block in blocks:
        builder.add(block)
    return builder.finish()


# --------------------------------------------------------------------------------------------
# DOCX: the remote work policy.
# --------------------------------------------------------------------------------------------


def build_remote_work_docx() -> bytes:
    d = docx.Document()
    d.styles["Normal"].font.name = "Calibri"
    d.styles["Normal"].font.size = Pt(11)
    section = d.sections[0]
    section.header.paragraphs[0].text = f"{COMPANY} - Remote Work Policy"
    section.footer.paragraphs[0].text = f"{COMPANY} GmbH - Internal - Version 1, 1 January 2026"

    d.add_heading("Remote Work Policy", level=1)
    d.add_paragraph(
        "This policy explains when and how employees of Larkspur Logistics may work away from "
        "their office. It applies to all employees with an employment contract in Germany."
    )

    d.add_heading("Eligibility", level=2)
    d.add_paragraph(
        "Employees who have completed their probation period may work remotely for up to three "
        "days per week, in agreement with their line manager."
    )
    d.add_paragraph(
        "Roles that need physical presence on site, such as warehouse, yard and driving roles, "
        "are not eligible for remote work. The table below shows the usual arrangement for each "
        "group of roles."
    )
    table = d.add_table(rows=1, cols=3)
    table.style = "Table Grid"
    for cell, text in zip(table.rows[0].cells, ["Role group", "Remote days per week", "Agreed with"]):
        cell.text = text
        for run in cell.paragraphs[0].runs:
            run.bold = True
    for row in [
        ["Office staff", "up to 3", "Line manager"],
        ["Team leads", "up to 2", "Head of department"],
        ["Customer service (shift rota)", "up to 1", "Shift planner"],
        ["Warehouse, yard and drivers", "none", "Not applicable"],
    ]:
        cells = table.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text

    d.add_heading("Core hours", level=2)
    d.add_paragraph(
        "Core hours are 10:00 to 15:00 Central European Time. During core hours remote employees "
        "must be reachable by phone and by chat, and they take part in team meetings with the "
        "camera switched on where the team agrees on it."
    )

    d.add_heading("Equipment", level=2)
    d.add_paragraph("For remote work the company provides:")
    for item in [
        "a company laptop with a docking station",
        "a headset for calls",
        "a second monitor on request",
    ]:
        d.add_paragraph(item, style="List Bullet")
    d.add_paragraph(
        "In addition, the company pays a one-off home office allowance of EUR 300 for a desk or "
        "chair. Claim it once through the expense tool with the receipt attached."
    )
    d.add_paragraph(
        "Company equipment stays the property of Larkspur Logistics and is returned when the "
        "employment ends."
    )

    d.add_heading("Working from abroad", level=2)
    d.add_paragraph(
        "Working from another country is allowed for up to 20 working days per calendar year, "
        "and only within the European Union. Follow these steps before you go:"
    )
    for item in [
        "Agree on the dates with your line manager.",
        "Register the stay with HR at least two weeks in advance.",
        "Connect only through the company VPN while abroad.",
    ]:
        d.add_paragraph(item, style="List Number")

    d.add_heading("Data protection at home", level=2)
    d.add_paragraph(
        "Customer and shipment data must not be visible to other people in your household. Lock "
        "your screen whenever you leave the laptop, and do not print documents with customer data "
        "at home."
    )

    cp = d.core_properties
    cp.title = "Remote Work Policy"
    cp.author = COMPANY
    cp.last_modified_by = COMPANY
    cp.comments = ""
    cp.revision = 1
    cp.created = DOCX_DATE
    cp.modified = DOCX_DATE
    cp.last_printed = DOCX_DATE

    buf = io.BytesIO()
    d.save(buf)
    return _normalise_zip(buf.getvalue())


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite a ZIP with fixed timestamps so the DOCX is byte-for-byte reproducible."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            new = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE)
            new.compress_type = zipfile.ZIP_DEFLATED
            new.external_attr = 0o644 << 16
            dst.writestr(new, src.read(info.filename))
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# Build and check
# --------------------------------------------------------------------------------------------


def build_all() -> dict[Path, bytes]:
    return {
        DOCS / "policies" / "travel-policy.pdf": build_pdf(
            travel_policy(1), f"{COMPANY} - Travel Policy", "Travel Policy", PDF_DATE
        ),
        VERSIONS / "travel-policy.v2.pdf": build_pdf(
            travel_policy(2), f"{COMPANY} - Travel Policy", "Travel Policy", PDF_DATE_V2
        ),
        DOCS / "hr" / "salaries-2026.pdf": build_pdf(
            salaries(), f"{COMPANY} - CONFIDENTIAL - Salary Bands 2026", "Salary Bands 2026", PDF_DATE
        ),
        DOCS / "policies" / "remote-work.docx": build_remote_work_docx(),
    }


def _norm(text: str) -> str:
    return " ".join(text.split())


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def document_text(path: Path) -> list[str]:
    """Text of a document as a list of units an evidence phrase must fit in (PDF: one per page)."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        with pymupdf.open(path) as doc:
            return [_norm(page.get_text()) for page in doc]
    if suffix == ".docx":
        d = docx.Document(str(path))
        parts = [p.text for p in d.paragraphs]
        for t in d.tables:
            for row in t.rows:
                parts.extend(c.text for c in row.cells)
        return [_norm(p) for p in parts]
    raw = path.read_text(encoding="utf-8")
    if suffix in (".html", ".htm"):
        parser = _HtmlText()
        parser.feed(raw)
        return [_norm(" ".join(parser.parts))]
    return [_norm(raw)]


def check(built: dict[Path, bytes]) -> list[str]:
    problems: list[str] = []
    for path, data in built.items():
        if not path.exists() or path.read_bytes() != data:
            problems.append(f"{path.relative_to(HERE)}: differs from a fresh build (run the script)")
        if len(data) > 200 * 1024:
            problems.append(f"{path.relative_to(HERE)}: {len(data)} bytes, over 200 KB")
    for path in sorted(p for p in built if p.suffix == ".pdf"):
        with pymupdf.open(path) as doc:
            n = len(doc)
            for i, page in enumerate(doc, start=1):
                text = page.get_text()
                if "Larkspur Logistics - " not in text or f"Page {i} of {n}" not in text:
                    problems.append(f"{path.name}: page {i} lacks the running header or footer")
            found = 0
            for page in doc:  # the header is computed lazily: read it while the page is alive
                for t in page.find_tables().tables:
                    found += 1
                    names = t.header.names
                    if t.header.external or not all(" " in n or n.isalpha() for n in names):
                        problems.append(f"{path.name}: table header misread as {names}")
            if not found:
                problems.append(f"{path.name}: find_tables() finds no table")
    d = docx.Document(str(DOCS / "policies" / "remote-work.docx"))
    styles = {p.style.name for p in d.paragraphs}
    for wanted in ("Heading 1", "Heading 2", "List Bullet", "List Number"):
        if wanted not in styles:
            problems.append(f"remote-work.docx: no paragraph with style {wanted}")

    cases = yaml.safe_load((HERE / "eval.yaml").read_text(encoding="utf-8"))
    texts: dict[str, list[str]] = {}
    for case in cases:
        if case.get("expect") == "refused":
            continue
        uri, _, section = case["expect_source"].partition("#")
        path = DOCS / uri
        if not path.exists():
            problems.append(f"{case['id']}: source {uri} does not exist")
            continue
        units = texts.setdefault(uri, document_text(path))
        if section and not any(section in u for u in units):
            problems.append(f"{case['id']}: heading {section!r} not found in {uri}")
        for phrase in case.get("expect_evidence", []):
            if not any(phrase in u for u in units):
                problems.append(f"{case['id']}: evidence {phrase!r} not found verbatim in {uri}")
            if uri == "policies/travel-policy.pdf":
                v2 = [_norm(p.get_text()) for p in pymupdf.open(VERSIONS / "travel-policy.v2.pdf")]
                if not any(phrase in u for u in v2):
                    problems.append(f"{case['id']}: evidence {phrase!r} missing from v2")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    args = parser.parse_args(argv)
    built = build_all()
    if not args.check:
        for path, data in built.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)
                print(f"wrote {path.relative_to(HERE)} ({len(data)} bytes)")
            else:
                print(f"unchanged {path.relative_to(HERE)}")
    problems = check(built)
    for p in problems:
        print("PROBLEM:", p, file=sys.stderr)
    if not problems:
        print("check: all documents and evidence phrases OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
