"""Real image files for the image tests, made with Pillow: small PNG, JPEG, GIF and WebP pictures,
and a PNG of an exact size (padded with a text chunk) for the size limit."""

from __future__ import annotations

import base64
import io
import struct
import zlib

from PIL import Image

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def image_file(
    media_type: str = "image/png", color: tuple[int, int, int] = (200, 30, 30), size=(16, 12)
) -> bytes:
    """A small picture of one colour with a white square, in the given format."""
    picture = Image.new("RGB", size, color)
    picture.paste((255, 255, 255), (2, 2, 6, 6))
    out = io.BytesIO()
    picture.save(out, format=FORMATS[media_type])
    return out.getvalue()


def png_of_exactly(total_bytes: int) -> bytes:
    """A valid PNG of exactly `total_bytes` bytes: a small picture and a tEXt chunk of padding."""
    small = image_file("image/png")
    chunk_overhead = 12  # length, type and CRC
    keyword = b"padding\x00"
    filler = total_bytes - len(small) - chunk_overhead - len(keyword)
    assert filler >= 0
    data = keyword + b"x" * filler
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    iend = small.rindex(b"IEND") - 4  # before the IEND chunk's length
    padded = small[:iend] + chunk + small[iend:]
    assert len(padded) == total_bytes
    return padded


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def image_body(data: bytes, media_type: str = "image/png", **fields) -> dict:
    """A remember body of user u1 carrying the image."""
    return {"user_id": "u1", "image": {"media_type": media_type, "data": b64(data)}, **fields}
