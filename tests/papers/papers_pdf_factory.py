"""Small PDFs written with PyMuPDF for exact unit checks: a synthetic paper and every kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pymupdf

HEADER = "Synthetic Preprint - Under Review"
INTRO_1 = "Parsing scientific papers is a long-standing problem [1]. Text extraction needs careful hyphen-"
INTRO_2 = "ation handling and grouped citations [1, 2] to be useful for downstream benchmarks."
RELATED_A = "Prior systems read papers column by column. The left column comes first in reading order."
RELATED_B = "This paragraph continues the related work in the right column before the conclusion starts."
CONCLUSION = "We conclude that structure can be recovered from layout alone in simple cases."


def _furniture(page: pymupdf.Page, number: int, first_line: int) -> None:
    page.insert_text((200, 30), HEADER, fontsize=8, fontname="helv")
    page.insert_text((295, 820), str(number), fontsize=9, fontname="helv")
    for k in range(40):  # review-copy line numbers in the left margin
        page.insert_text((12, 100 + 16 * k), str(first_line + k), fontsize=7, fontname="helv")


def _halves(text: str) -> list[str]:
    cut = text.rfind(" ", 0, len(text) // 2 + 5)
    return [text[:cut], text[cut + 1 :]]


def _para(page: pymupdf.Page, x: float, y: float, lines: list[str], size: float = 10) -> float:
    for ln in lines:
        page.insert_text((x, y), ln, fontsize=size, fontname="tiro")
        y += size * 1.25
    return y + 8


def synthetic_paper(path: Path) -> Path:
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    _furniture(p1, 1, 1)
    p1.insert_text((120, 90), "A Synthetic Study of Parsing", fontsize=18, fontname="hebo")
    p1.insert_text((220, 120), "Jane Doe and John Roe", fontsize=11, fontname="helv")
    p1.insert_text((270, 160), "Abstract", fontsize=12, fontname="hebo")
    _para(p1, 90, 180, ["We study how to recover sections from layout. The abstract has two", "lines of text."])
    p1.insert_text((50, 250), "1 Introduction", fontsize=12, fontname="hebo")
    _para(p1, 50, 270, [INTRO_1, INTRO_2])
    _para(p1, 50, 330, ["A second introduction paragraph explains the motivation in more detail."])
    p1.insert_text((50, 780), "* Corresponding author: jane@example.org", fontsize=7, fontname="tiro")
    p2 = doc.new_page(width=595, height=842)
    _furniture(p2, 2, 41)
    p2.insert_text((50, 100), "2 Related Work", fontsize=12, fontname="hebo")
    y = _para(p2, 50, 120, _halves(RELATED_A))
    _para(p2, 50, y + 10, ["Another left paragraph about earlier", "parsers and their many limitations."])
    y = _para(p2, 320, 100, _halves(RELATED_B))
    p2.insert_text((320, y + 20), "3 Conclusion", fontsize=12, fontname="hebo")
    _para(p2, 320, y + 40, _halves(CONCLUSION))
    p3 = doc.new_page(width=595, height=842)
    _furniture(p3, 3, 81)
    p3.insert_text((50, 100), "References", fontsize=12, fontname="hebo")
    _para(p3, 50, 120, ["[1] Jane Doe and John Roe. A first paper on parsing. In Proc. of Parsing, 2020."])
    _para(p3, 50, 150, ["[2] Ann Lee. Another paper title. arXiv preprint arXiv:2101.00001, 2021."])
    p3.insert_text((50, 220), "A Extra Proofs", fontsize=12, fontname="hebo")
    _para(p3, 50, 240, ["The appendix holds proofs that are not part of the body."])
    doc.save(path)
    return path


def encrypted_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret paper text " * 5)
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user")
    return path


def scanned_pdf(path: Path) -> Path:
    """Pages that carry only an image, like a scan without OCR."""
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 200, 260), False)
    pix.clear_with(200)
    doc = pymupdf.open()
    for _ in range(3):
        doc.new_page().insert_image(pymupdf.Rect(50, 50, 550, 750), pixmap=pix)
    doc.save(path)
    return path


def long_pdf(path: Path, pages: int = 520) -> Path:
    doc = pymupdf.open()
    for k in range(pages):
        doc.new_page().insert_text((72, 300), f"Chapter text number {k + 1} of a very long document, a book.")
    doc.save(path)
    return path


def no_sections_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        _para(page, 72, 72, ["An invoice, a letter or a flyer: plain paragraphs without any headings at all."] * 30)
    doc.save(path)
    return path


def bad_files(folder: Path, good: Path) -> dict[str, Path]:
    """code → path for every bad input the ingester must survive."""
    folder.mkdir(parents=True, exist_ok=True)
    data = good.read_bytes()
    files = {
        "empty_file": folder / "empty.pdf",
        "html_not_pdf": folder / "rate_limited.pdf",
        "truncated_pdf": folder / "truncated.pdf",
        "corrupt_pdf": folder / "corrupt.pdf",
        "not_pdf": folder / "notes.pdf",
    }
    files["empty_file"].write_bytes(b"")
    files["html_not_pdf"].write_text(
        "<!DOCTYPE html><html><head><title>429 Too Many Requests</title></head><body>slow down</body></html>"
    )
    files["truncated_pdf"].write_bytes(data[: len(data) // 10])
    files["corrupt_pdf"].write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n")
    files["not_pdf"].write_text("just some text notes, saved with the wrong extension\n")
    files["encrypted_pdf"] = encrypted_pdf(folder / "encrypted.pdf")
    files["no_text_layer"] = scanned_pdf(folder / "scanned.pdf")
    files["too_many_pages"] = long_pdf(folder / "book.pdf")
    files["no_sections"] = no_sections_pdf(folder / "flyer.pdf")
    return files
