"""Parse throughput of `parse_document` on the shared corpus, per format, against the cheapest text extraction.

Every corpus file of each format goes through `rag_pipeline.parsing.parse_document` (the
pipeline's only parsing entry point, limits checks included). In the same run, on the same
machine, each file also goes through the cheapest possible text extraction for its format, so
the ratio parser/baseline means something even on a noisy machine:

    pdf, scanned  PyMuPDF open + page.get_text("text") on every page
    docx          python-docx: text of every body paragraph
    pptx          python-pptx: text of every shape with a text frame
    html          lxml.html document_fromstring(...).text_content()
    md            bytes.decode("utf-8")

Per format it prints a table (files, pages where the format has pages -- PDF pages, PPTX
slides --, pages/s, MB/s, elements/s, baseline MB/s, ratio) and, for PDFs, the share of parse
time spent inside OCR (measured by wrapping `pymupdf.Page.get_textpage_ocr`). Times are the
best of --repeat runs (a document that needed OCR runs once), after one untimed baseline pass
over the file (the first pass over a file is cold, whichever code makes it). Import cost is kept out of the
per-file times: a tiny in-memory Markdown document is parsed first (it imports `unstructured`),
then one tiny in-memory document per selected format; both are reported. Peak RSS of the whole
process (resource.getrusage ru_maxrss) is printed at the end.

    python bench/bench_parse.py                        # every format, scanned PDFs with OCR (minutes)
    python bench/bench_parse.py --no-scanned           # skip OCR (about 40 s of the ~2 min here)
    python bench/bench_parse.py --formats scanned      # only the OCR subset
    python bench/bench_parse.py --formats docx,md --repeat 3 --json /tmp/bench.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from io import BytesIO
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag_pipeline.parsing import ParseError, ParseLimits, parse_document, parser_version_for

DEFAULT_CORPUS = Path(os.environ.get("RAG_CORPUS_DIR", Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"))
MB = 1_000_000


# ------------------------------------------------------------------------------------------------
# Baselines: the cheapest text extraction per format (the floor any parser builds on)
# ------------------------------------------------------------------------------------------------


def baseline_pdf(data: bytes) -> None:
    doc = pymupdf.open(stream=data, filetype="pdf")
    for page in doc:
        page.get_text("text")
    doc.close()


def baseline_docx(data: bytes) -> None:
    import docx

    "\n".join(p.text for p in docx.Document(BytesIO(data)).paragraphs)


def baseline_pptx(data: bytes) -> None:
    import pptx

    parts = []
    for slide in pptx.Presentation(BytesIO(data)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
    "\n".join(parts)


def baseline_html(data: bytes) -> None:
    from lxml import html

    html.document_fromstring(data).text_content()


def baseline_md(data: bytes) -> None:
    data.decode("utf-8")


# ------------------------------------------------------------------------------------------------
# Tiny in-memory documents, parsed once per format before timing (imports, first-call caches)
# ------------------------------------------------------------------------------------------------

WARMUP_MD = b"# Warm-up\n\nParsed once before timing so `unstructured` is imported.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"


def tiny_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Warm-up page with a text layer.")
    data = doc.tobytes()
    doc.close()
    return data


def tiny_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Warm-up", level=1)
    document.add_paragraph("Parsed once before timing.")
    out = BytesIO()
    document.save(out)
    return out.getvalue()


def tiny_pptx() -> bytes:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Warm-up"
    slide.placeholders[1].text = "Parsed once before timing."
    out = BytesIO()
    deck.save(out)
    return out.getvalue()


def tiny_html() -> bytes:
    return b"<!doctype html><html><body><main><h1>Warm-up</h1><p>Parsed once before timing.</p></main></body></html>"


@dataclass(frozen=True)
class FormatSpec:
    key: str
    label: str
    folder: str
    suffix: str
    paged: bool  # report pages and pages/s (PDF pages, PPTX slides)
    ocr: bool  # report OCR pages and OCR share
    baseline: Callable[[bytes], None]
    baseline_label: str
    tiny: Callable[[], bytes] | None
    tiny_name: str = ""
    exclude_suffix: str = ""  # files in the folder that are not documents of this format
    note: str = ""


FORMATS: dict[str, FormatSpec] = {
    spec.key: spec
    for spec in (
        FormatSpec("pdf", "PDF, born-digital", "pdf", ".pdf", True, True, baseline_pdf,
                   'PyMuPDF get_text("text") per page', tiny_pdf, "warmup.pdf"),
        FormatSpec("scanned", "PDF, scanned (OCR)", "scanned", ".pdf", True, True, baseline_pdf,
                   'PyMuPDF get_text("text") per page (finds little or no text: no OCR)', None,
                   note="JPG/TIFF scans in docs/scanned are skipped: parse_document accepts no image kinds"),
        FormatSpec("docx", "DOCX", "docx", ".docx", False, False, baseline_docx,
                   "python-docx paragraph text", tiny_docx, "warmup.docx"),
        FormatSpec("pptx", "PPTX (pages = slides)", "pptx", ".pptx", True, False, baseline_pptx,
                   "python-pptx shape text", tiny_pptx, "warmup.pptx"),
        FormatSpec("html", "HTML", "html", ".html", False, False, baseline_html,
                   "lxml.html text_content()", tiny_html, "warmup.html", exclude_suffix=".expected.html",
                   note="*.expected.html (Readability ground-truth fragments) are skipped"),
        FormatSpec("md", "Markdown", "md", ".md", False, False, baseline_md,
                   'bytes.decode("utf-8")', None),
    )
}


# ------------------------------------------------------------------------------------------------
# Measuring
# ------------------------------------------------------------------------------------------------


class OcrClock:
    """Adds up the wall time spent in PyMuPDF's OCR call while installed (bench-only wrapper)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._original = pymupdf.Page.get_textpage_ocr

    def __enter__(self) -> OcrClock:
        clock, original = self, self._original

        def timed(page, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original(page, *args, **kwargs)
            finally:
                clock.seconds += time.perf_counter() - started

        pymupdf.Page.get_textpage_ocr = timed
        return self

    def __exit__(self, *exc) -> None:
        pymupdf.Page.get_textpage_ocr = self._original


@dataclass
class FileResult:
    name: str
    bytes: int
    pages: int | None = None
    elements: int = 0
    parse_s: float = 0.0
    parse_cpu_s: float = 0.0
    baseline_s: float = 0.0
    ocr_s: float = 0.0
    ocr_pages: int = 0
    runs: int = 0
    error: str = ""


@dataclass
class FormatResult:
    key: str
    label: str
    baseline: str
    files: list[FileResult] = field(default_factory=list)
    peak_rss_mib_after: float = 0.0
    totals: dict = field(default_factory=dict)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def time_baseline(fn: Callable[[bytes], None], data: bytes) -> float:
    gc.collect()
    started = time.perf_counter()
    fn(data)
    return time.perf_counter() - started


def bench_file(path: Path, spec: FormatSpec, limits: ParseLimits, repeat: int) -> FileResult:
    data = path.read_bytes()
    result = FileResult(path.name, len(data))
    try:
        spec.baseline(data)  # untimed: the first pass over a file is cold for whichever runs first
        result.baseline_s = min(time_baseline(spec.baseline, data) for _ in range(repeat))
    except Exception as exc:  # noqa: BLE001 -- a baseline library choking must not end the bench
        result.error = f"baseline failed: {type(exc).__name__}: {exc}"
        return result
    for _ in range(repeat):
        gc.collect()
        with OcrClock() as clock:
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                doc = parse_document(data, path.name, limits)
            except ParseError as exc:
                result.error = f"ParseError ({exc.stage}): {exc}"
                result.parse_s = time.perf_counter() - started
                return result
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        result.runs += 1
        if result.runs == 1 or wall < result.parse_s:
            result.parse_s, result.parse_cpu_s, result.ocr_s = wall, cpu, clock.seconds
            result.pages, result.elements, result.ocr_pages = doc.page_count, len(doc.elements), len(doc.ocr_pages)
        if doc.ocr_pages:
            break  # OCR takes seconds per page; one run is enough
    return result


def warm_up(specs: list[FormatSpec], limits: ParseLimits) -> dict[str, float]:
    """Parse tiny in-memory documents so import and first-call costs stay out of the timings."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    parse_document(WARMUP_MD, "warmup.md", limits)
    seconds["md (imports unstructured)"] = time.perf_counter() - started
    for spec in specs:
        if spec.tiny is None:
            continue
        data = spec.tiny()
        started = time.perf_counter()
        parse_document(data, spec.tiny_name, limits)
        spec.baseline(data)
        seconds[spec.key] = time.perf_counter() - started
    return seconds


def totals(files: list[FileResult]) -> dict:
    ok = [r for r in files if not r.error]
    t = {
        "files": len(files),
        "errors": len(files) - len(ok),
        "bytes": sum(r.bytes for r in ok),
        "pages": sum(r.pages or 0 for r in ok),
        "elements": sum(r.elements for r in ok),
        "parse_s": sum(r.parse_s for r in ok),
        "parse_cpu_s": sum(r.parse_cpu_s for r in ok),
        "baseline_s": sum(r.baseline_s for r in ok),
        "ocr_s": sum(r.ocr_s for r in ok),
        "ocr_pages": sum(r.ocr_pages for r in ok),
    }
    t["pages_per_s"] = div(t["pages"], t["parse_s"])
    t["mb_per_s"] = div(t["bytes"] / MB, t["parse_s"])
    t["elements_per_s"] = div(t["elements"], t["parse_s"])
    t["baseline_pages_per_s"] = div(t["pages"], t["baseline_s"])
    t["baseline_mb_per_s"] = div(t["bytes"] / MB, t["baseline_s"])
    t["ratio"] = div(t["parse_s"], t["baseline_s"])
    t["ocr_share"] = div(t["ocr_s"], t["parse_s"])
    return t


def div(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


# ------------------------------------------------------------------------------------------------
# Printing
# ------------------------------------------------------------------------------------------------


def fmt(value: float | None, width: int, digits: int = 1, suffix: str = "") -> str:
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:{width - len(suffix)}.{digits}f}{suffix}"


def print_format(spec: FormatSpec, result: FormatResult) -> None:
    print(f"== {spec.label}: {len(result.files)} files; baseline = {spec.baseline_label}")
    if spec.note:
        print(f"   ({spec.note})")
    cols = f"{'document':44} {'MB':>6}"
    if spec.paged:
        cols += f" {'pages':>5} {'pages/s':>8}"
    cols += f" {'MB/s':>7} {'elems':>6} {'elem/s':>8} {'parse s':>8} {'base MB/s':>9} {'ratio':>7}"
    if spec.ocr:
        cols += f" {'OCR pp':>6} {'OCR %':>6}"
    print(cols)
    print("-" * len(cols))
    for r in result.files:
        line = f"{r.name[:44]:44} {fmt(r.bytes / MB, 6, 2)}"
        if r.error:
            print(f"{line}  {r.error[:120]}")
            continue
        if spec.paged:
            line += f" {r.pages if r.pages is not None else '-':>5} {fmt(div(r.pages or 0, r.parse_s), 8)}"
        line += (
            f" {fmt(div(r.bytes / MB, r.parse_s), 7, 2)} {r.elements:6} {fmt(div(r.elements, r.parse_s), 8, 0)}"
            f" {fmt(r.parse_s, 8, 3)} {fmt(div(r.bytes / MB, r.baseline_s), 9, 1)}"
            f" {fmt(div(r.parse_s, r.baseline_s), 7, 1, 'x')}"
        )
        if spec.ocr:
            share = 100 * r.ocr_s / r.parse_s if r.ocr_pages and r.parse_s > 0 else None
            line += f" {r.ocr_pages:6} {fmt(share, 6, 1, '%')}"
        print(line)
    t = result.totals
    summary = f"   total: {t['files'] - t['errors']} files, {t['bytes'] / MB:.2f} MB"
    if spec.paged:
        summary += f", {t['pages']} pages, {fmt(t['pages_per_s'], 0)} pages/s"
    summary += (
        f", {fmt(t['mb_per_s'], 0, 2)} MB/s, {fmt(t['elements_per_s'], 0, 0)} elements/s"
        f" (parse {t['parse_s']:.2f} s wall, {t['parse_cpu_s']:.2f} s CPU)"
        f"; baseline {fmt(t['baseline_mb_per_s'], 0, 1)} MB/s"
        + (f", {fmt(t['baseline_pages_per_s'], 0)} pages/s" if spec.paged else "")
        + f"; parser/baseline {fmt(t['ratio'], 0, 1)}x"
    )
    if spec.ocr:
        summary += f"; OCR {t['ocr_pages']} pages, {100 * (t['ocr_share'] or 0):.1f}% of parse time"
    if t["errors"]:
        summary += f"; {t['errors']} file(s) failed (excluded)"
    print(summary)
    print(f"   peak RSS so far: {result.peak_rss_mib_after:.0f} MiB\n")


def print_summary(results: list[FormatResult]) -> None:
    head = (
        f"{'format':22} {'files':>5} {'MB':>6} {'pages':>5} {'pages/s':>8} {'MB/s':>7} {'elem/s':>7}"
        f" {'base MB/s':>9} {'ratio':>7} {'OCR %':>6}"
    )
    print("== Summary (totals per format; ratio = parse time / baseline time)")
    print(head)
    print("-" * len(head))
    for res in results:
        spec, t = FORMATS[res.key], res.totals
        print(
            f"{spec.label[:22]:22} {t['files'] - t['errors']:5} {t['bytes'] / MB:6.2f}"
            f" {t['pages'] if spec.paged else '-':>5} {fmt(t['pages_per_s'] if spec.paged else None, 8)}"
            f" {fmt(t['mb_per_s'], 7, 2)} {fmt(t['elements_per_s'], 7, 0)} {fmt(t['baseline_mb_per_s'], 9, 1)}"
            f" {fmt(t['ratio'], 7, 1, 'x')} {fmt(100 * t['ocr_share'] if spec.ocr and t['ocr_share'] is not None else None, 6, 1, '%')}"
        )


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------


def corpus_files(corpus: Path, spec: FormatSpec) -> list[Path]:
    folder = corpus / "docs" / spec.folder
    return sorted(
        p for p in folder.glob(f"*{spec.suffix}")
        if p.is_file() and not (spec.exclude_suffix and p.name.endswith(spec.exclude_suffix))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default {DEFAULT_CORPUS}")
    parser.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated subset of {','.join(FORMATS)}")
    parser.add_argument("--no-scanned", action="store_true", help="skip scanned PDFs (OCR: seconds per page)")
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs per file (OCR documents run once)")
    parser.add_argument("--ocr-languages", default=ParseLimits().ocr_languages)
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    keys = [k.strip() for k in args.formats.split(",") if k.strip()]
    unknown = [k for k in keys if k not in FORMATS]
    if unknown:
        parser.error(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    if args.no_scanned:
        keys = [k for k in keys if k != "scanned"]
    specs = [spec for key, spec in FORMATS.items() if key in keys]  # fixed order, whatever the order asked
    files = {spec.key: corpus_files(args.corpus, spec) for spec in specs}
    if not any(files.values()):
        print(f"no corpus files for {', '.join(keys) or 'no formats'} under {args.corpus}/docs", file=sys.stderr)
        return 1
    repeat = max(1, args.repeat)
    limits = ParseLimits(ocr_languages=args.ocr_languages)

    started_at = dt.datetime.now().astimezone()
    print(
        f"{started_at:%Y-%m-%d %H:%M %Z}, {platform.node()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}, Python {platform.python_version()}, PyMuPDF {pymupdf.VersionBind}"
    )
    print(f"parsers: {parser_version_for('pdf')}, {parser_version_for('docx')}; OCR languages {args.ocr_languages}")
    print(
        f"times: best of {repeat} per file (OCR documents once), after one untimed baseline pass per file; "
        "MB = 10^6 bytes; elements = ParsedDocument.elements"
    )
    warm = warm_up(specs, limits)
    print(
        "warm-up (excluded from all timings): parsed tiny in-memory documents first -- "
        + ", ".join(f"{k} {v:.2f} s" for k, v in warm.items())
        + f"; peak RSS after warm-up {peak_rss_mib():.0f} MiB\n"
    )

    results: list[FormatResult] = []
    for spec in specs:
        res = FormatResult(spec.key, spec.label, spec.baseline_label)
        res.files = [bench_file(path, spec, limits, repeat) for path in files[spec.key]]
        res.totals = totals(res.files)
        res.peak_rss_mib_after = peak_rss_mib()
        results.append(res)
        print_format(spec, res)
        sys.stdout.flush()

    print_summary(results)
    elapsed = (dt.datetime.now().astimezone() - started_at).total_seconds()
    peak = peak_rss_mib()
    print(f"\npeak RSS (ru_maxrss, whole process): {peak:.0f} MiB; bench wall time {elapsed:.0f} s; "
          f"load average now {os.getloadavg()[0]:.2f}")

    if args.json:
        payload = {
            "started_at": started_at.isoformat(timespec="seconds"),
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "pymupdf": pymupdf.VersionBind,
            "parsers": {"pdf": parser_version_for("pdf"), "office": parser_version_for("docx")},
            "options": {"formats": keys, "repeat": repeat, "ocr_languages": args.ocr_languages,
                        "corpus": str(args.corpus)},
            "warmup_s": warm,
            "formats": {res.key: asdict(res) for res in results},
            "peak_rss_mib": peak,
            "wall_s": elapsed,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
