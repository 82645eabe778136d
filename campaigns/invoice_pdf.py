"""A PDF of the text and rules an invoice needs, written out directly (PDF 1.4, ISO 32000's
subset every reader opens): no layout engine for one page of lines.

Latin text (English, German, Spanish) is set in the standard Helvetica with WinAnsiEncoding; text
with characters outside it (Chinese) in Adobe's STSong-Light with UniGB-UCS2-H, a font every PDF
reader supplies for Simplified Chinese, so nothing is embedded. Page streams are left uncompressed:
an invoice is small, and its text stays searchable and testable as written.
"""

from dataclasses import dataclass, field

A4 = (595, 842)
LATIN, LATIN_BOLD, CHINESE = "F1", "F2", "F3"
# Helvetica's advance widths (per 1000 units of the size) for the characters amounts are written
# with, to set numbers flush right; any other character counts as a capital's width.
_WIDTHS = {**dict.fromkeys("0123456789$€£¥", 556), **dict.fromkeys(".,:; '", 278), "-": 333, "%": 889}


def _latin(text: str) -> bool:
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def text_width(text: str, size: float) -> float:
    if not _latin(text):
        return len(text) * size  # a Chinese character is a full em; near enough for Latin in it
    return sum(_WIDTHS.get(char, 667) for char in text) * size / 1000


def _literal(text: str) -> str:
    """A PDF literal string of cp1252 bytes, every byte outside printable ASCII as an octal escape."""
    out = []
    for byte in text.encode("cp1252"):
        char = chr(byte)
        if char in "\\()":
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "(" + "".join(out) + ")"


def _hex_ucs2(text: str) -> str:
    return "<" + "".join(f"{ord(char):04X}" for char in text if ord(char) <= 0xFFFF) + ">"


@dataclass
class Page:
    ops: list[str] = field(default_factory=list)

    def text(
        self, x: float, y: float, text: str, *, size: float = 10, bold: bool = False, right: bool = False
    ):
        text = " ".join(str(text).split())
        if not text:
            return
        if right:
            x -= text_width(text, size)
        if _latin(text):
            font, shown = (LATIN_BOLD if bold else LATIN), _literal(text)
        else:
            font, shown = CHINESE, _hex_ucs2(text)
        self.ops.append(f"BT /{font} {size:g} Tf {x:.2f} {y:.2f} Td {shown} Tj ET")

    def rule(self, x1: float, y: float, x2: float, *, width: float = 0.5):
        self.ops.append(f"{width:g} w {x1:.2f} {y:.2f} m {x2:.2f} {y:.2f} l S")


def pdf_document(*, pages: list[Page], title: str = "") -> bytes:
    """The pages as one PDF file, its cross-reference table pointing at each object's offset."""
    objects: list[bytes] = []

    def add(body: str | bytes) -> int:
        objects.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(objects)

    catalog = add("")  # filled in once the pages' object is known
    fonts = {
        LATIN: add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"),
        LATIN_BOLD: add(
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
        ),
    }
    descriptor = add(
        "<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] "
        "/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>"
    )
    cid = add(
        "<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo "
        f"<< /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor {descriptor} 0 R /DW 1000 >>"
    )
    fonts[CHINESE] = add(
        f"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
        f"/DescendantFonts [{cid} 0 R] >>"
    )
    resources = " ".join(f"/{name} {number} 0 R" for name, number in fonts.items())
    pages_number = len(objects) + 1 + 2 * len(pages)
    kids = []
    for page in pages:
        stream = "\n".join(page.ops).encode("latin-1")
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                f"<< /Type /Page /Parent {pages_number} 0 R /MediaBox [0 0 {A4[0]} {A4[1]}] "
                f"/Resources << /Font << {resources} >> >> /Contents {content} 0 R >>"
            )
        )
    assert (
        add(f"<< /Type /Pages /Kids [{' '.join(f'{kid} 0 R' for kid in kids)}] /Count {len(kids)} >>")
        == pages_number
    )
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_number} 0 R >>".encode("latin-1")
    info = add(f"<< /Title {_hex_utf16(title)} /Producer (JoyBack) >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        info,
        xref,
    )
    return bytes(out)


def _hex_utf16(text: str) -> str:
    """A text string in the document's information, as UTF-16BE with its byte order mark."""
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"
