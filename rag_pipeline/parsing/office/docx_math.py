"""Word equations (OMML) written out as linear text before python-docx reads the document.

python-docx reads only `w:r` runs, and an equation is `m:oMath` (inline, inside a paragraph) or
`m:oMathPara` (a display equation, a paragraph of its own) holding `m:r` runs and structures:
every formula of a specification, a rate sheet or a paper was missing from the index, and a
display equation's paragraph vanished. Each equation is replaced by one run of its linear form,
close to what Word's own "Linear" view shows: x^2, x_i, (a+b)/(c), √(x), ∑_(i=1)^n x_i, sin x,
a matrix as [a, b; c, d]."""

from __future__ import annotations

import re
from typing import Any

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
MATH = re.compile(rb"<(?:\w+:)?oMath[\s>]")  # a part holding an equation (prefilter before parsing it)
_SIMPLE = re.compile(r"^[\w.,]+$")  # a group that needs no brackets around it
_END = "\x00"  # where a script ends: a space when a letter or digit follows ("r_year t"), else nothing


def math_as_text(root: Any) -> bool:
    """Each equation of a Word part replaced by a run of its linear text, in place; whether any
    was. A display equation (`m:oMathPara`) keeps its paragraph."""
    changed = False
    for para in list(root.iter(f"{{{M}}}oMathPara")):
        text = " ".join(_linear(math) for math in para.iter(f"{{{M}}}oMath"))
        para.getparent().replace(para, _run(para, text))
        changed = True
    for math in list(root.iter(f"{{{M}}}oMath")):
        math.getparent().replace(math, _run(math, _linear(math)))
        changed = True
    return changed


def _run(like: Any, text: str) -> Any:
    text = re.sub(f"{_END}+(?=\\w)", " ", text).replace(_END, "")
    run = like.makeelement(f"{{{W}}}r", {})
    t = run.makeelement(f"{{{W}}}t", {"{http://www.w3.org/XML/1998/namespace}space": "preserve"})
    t.text = text
    run.append(t)
    return run


def _linear(node: Any) -> str:
    tag = node.tag.split("}")[-1] if isinstance(node.tag, str) else ""
    if tag.endswith("Pr") or tag in ("ctrlPr", ""):
        return ""
    if tag == "t":
        return node.text or ""
    if tag == "sSup":
        return _part(node, "e") + "^" + _group(node, "sup") + _END
    if tag == "sSub":
        return _part(node, "e") + "_" + _group(node, "sub") + _END
    if tag == "sSubSup":
        return _part(node, "e") + "_" + _group(node, "sub") + "^" + _group(node, "sup") + _END
    if tag == "sPre":
        return "_" + _group(node, "sub") + "^" + _group(node, "sup") + _part(node, "e")
    if tag == "f":
        return _group(node, "num") + "/" + _group(node, "den")
    if tag == "rad":
        degree = _part(node, "deg")
        return (degree if degree else "") + "√" + _group(node, "e")
    if tag == "d":
        begin, separator, end = _chr(node, "dPr", "begChr", "("), _chr(node, "dPr", "sepChr", ","), _chr(node, "dPr", "endChr", ")")
        return begin + separator.join(_linear(e) for e in node.findall(f"{{{M}}}e")) + end
    if tag == "nary":
        sub, sup = _part(node, "sub"), _part(node, "sup")
        limits = ("_" + _bracket(sub) if sub else "") + ("^" + _bracket(sup) if sup else "")
        return _chr(node, "naryPr", "chr", "∫") + limits + " " + _part(node, "e")
    if tag == "func":
        return _part(node, "fName") + " " + _part(node, "e")
    if tag in ("limLow", "limUpp"):
        return _part(node, "e") + ("_" if tag == "limLow" else "^") + _group(node, "lim")
    if tag == "eqArr":
        return "; ".join(_linear(e) for e in node.findall(f"{{{M}}}e"))
    if tag == "m":
        rows = node.findall(f"{{{M}}}mr")
        return "[" + "; ".join(", ".join(_linear(e) for e in row.findall(f"{{{M}}}e")) for row in rows) + "]"
    return "".join(_linear(child) for child in node)


def _part(node: Any, name: str) -> str:
    child = node.find(f"{{{M}}}{name}")
    return _linear(child) if child is not None else ""


def _group(node: Any, name: str) -> str:
    return _bracket(_part(node, name))


def _bracket(text: str) -> str:
    return text if _SIMPLE.match(text) else f"({text})"


def _chr(node: Any, properties: str, name: str, default: str) -> str:
    element = node.find(f"{{{M}}}{properties}/{{{M}}}{name}")
    if element is None:
        return default
    return element.get(f"{{{M}}}val", default)
