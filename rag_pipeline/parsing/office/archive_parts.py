"""An Office file (a ZIP archive) written again with some of its parts replaced: how the DOCX and
PPTX rewrites (docx_wrappers.py, superscript_runs.py) hand their changes to the partitioners."""

from __future__ import annotations

import zipfile
from io import BytesIO


def with_parts(archive: zipfile.ZipFile, changed: dict[str, bytes]) -> bytes:
    """The archive's bytes with each part named in `changed` replaced, every other part and every
    entry's metadata as they were."""
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
        for info in archive.infolist():
            rewritten.writestr(info, changed.get(info.filename) or archive.read(info.filename))
    return out.getvalue()
