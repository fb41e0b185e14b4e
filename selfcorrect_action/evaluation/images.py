"""PNG and JPEG artifacts: right magic bytes, sane dimensions, decodes fully, and not blank.

The file was written by untrusted code. A 100000x100000 PNG fits in a few hundred bytes and would
take 10 GB to decode, so the declared size is read from the header and compared with a ceiling
before a single pixel is decoded.
"""

from __future__ import annotations

import struct
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageStat

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.evaluation import checks
from selfcorrect_action.evaluation.sniff import JPEG_MAGIC, PNG_MAGIC, describe, read_head
from selfcorrect_action.taxonomy import Check

# 40 Mpx: a 300-dpi 20x13-inch figure still fits; decoding it peaks near 160 MB (RGBA).
PIXEL_CEILING = 40_000_000
# Grey-level standard deviation (0-255) of the thumbnail below which an image counts as one
# flat colour. JPEG noise on a solid image stays under 1; a chart with a few thin lines on
# white is well above 5.
BLANK_STDDEV_FLOOR = 2.0
THUMBNAIL_SIZE = (256, 256)

_FORMATS = {"png": ("PNG", PNG_MAGIC), "jpeg": ("JPEG", JPEG_MAGIC)}


@dataclass(frozen=True)
class _Decoded:
    width: int
    height: int
    mode: str
    grey: Image.Image  # a small grey-level copy, alpha flattened onto white


class _Unreadable(Exception):
    """The bytes are not a usable image; the message says why, for the check's detail."""


def check_image(spec: ArtifactSpec, file: Path) -> list[Check]:
    label, magic = _FORMATS[spec.kind]
    head = read_head(file)
    if not head.startswith(magic):
        return [
            checks.failed(spec.path, "kind", f"expected a {label} image, found {describe(head)}")
        ]
    try:
        if spec.kind == "png":
            _check_png_header(head)
        decoded = _decode(file, label)
    except _Unreadable as exc:
        return [checks.failed(spec.path, "kind", f"expected a valid {label} image, {exc}")]
    found = f"{label} image, {decoded.width}x{decoded.height} {decoded.mode}"
    results = [checks.passed(spec.path, "kind", found)]
    if spec.non_blank:
        results.append(_non_blank(spec.path, decoded))
    return results


def _check_png_header(head: bytes) -> None:
    # PNG's IHDR is always the first chunk at a fixed offset: the size can be checked without
    # trusting any decoder.
    if len(head) < 24 or head[12:16] != b"IHDR":
        raise _Unreadable("found no IHDR chunk where every PNG has one (bytes 12-15)")
    width, height = struct.unpack(">II", head[16:24])
    _check_pixels(width, height)


def _decode(file: Path, label: str) -> _Decoded:
    try:
        with warnings.catch_warnings():
            # Pillow's own bomb guard only warns between 1x and 2x its limit: make it refuse.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(file, formats=[label]) as image:
                _check_pixels(*image.size)  # header parsed, nothing decoded yet
                image.load()
                return _Decoded(*image.size, image.mode, _grey_thumbnail(image))
    except _Unreadable:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _Unreadable(f"found a header Pillow refuses as a decompression bomb ({exc})") from exc
    except Exception as exc:
        # Hostile or truncated bytes make Pillow raise OSError, SyntaxError, ValueError,
        # struct.error, EOFError, zlib.error...: all of them mean "not a usable image".
        raise _Unreadable(f"found bytes that do not decode: {type(exc).__name__}: {exc}") from exc


def _check_pixels(width: int, height: int) -> None:
    if width == 0 or height == 0:
        raise _Unreadable(f"found a header declaring {width}x{height} pixels (empty image)")
    if width * height > PIXEL_CEILING:
        raise _Unreadable(
            f"found a header declaring {width}x{height} = {width * height:,} pixels, above the "
            f"{PIXEL_CEILING:,}-pixel ceiling (refused before decoding: a possible "
            "decompression bomb)"
        )


def _grey_thumbnail(image: Image.Image) -> Image.Image:
    small = image.copy()
    small.thumbnail(THUMBNAIL_SIZE)
    if small.mode in {"RGBA", "LA", "PA"} or "transparency" in small.info:
        # A transparent background must read as the white it will be shown on, not as the
        # arbitrary colour stored under alpha 0.
        rgba = small.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        small = Image.alpha_composite(white, rgba)
    return small.convert("L")


def _non_blank(path: str, decoded: _Decoded) -> Check:
    stat = ImageStat.Stat(decoded.grey)
    stddev, mean = stat.stddev[0], stat.mean[0]
    if stddev > BLANK_STDDEV_FLOOR:
        return checks.passed(path, "not blank", f"grey-level std dev {stddev:.1f}")
    return checks.failed(
        path,
        "not blank",
        f"expected a non-blank image (grey-level std dev above {BLANK_STDDEV_FLOOR}), found a "
        f"nearly uniform image: std dev {stddev:.2f}, mean grey level {mean:.0f} of 255",
    )


# What a judge that sees images is sent: enough to read a chart's bars and labels, small
# enough that a few of them cost little next to the prompt (and fit a recording).
JUDGE_MAX_SIDE = 768
JUDGE_MAX_BYTES = 400_000


@dataclass(frozen=True)
class JudgeImage:
    media_type: str  # "image/png" or "image/jpeg"
    data: bytes
    width: int  # as sent
    height: int
    original: tuple[int, int]


def judge_image(file: Path, kind: str) -> JudgeImage | None:
    """The artifact as the judge model sees it: decoded only after the same header and
    bomb checks as the contract's, flattened onto white, downscaled to JUDGE_MAX_SIDE and
    re-encoded (PNG, or JPEG when that is too large). None when it is not a usable image."""
    if kind not in _FORMATS:
        return None
    label, magic = _FORMATS[kind]
    head = read_head(file)
    if not head.startswith(magic):
        return None
    try:
        if kind == "png":
            _check_png_header(head)
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(file, formats=[label]) as image:
                _check_pixels(*image.size)
                image.load()
                original = image.size
                small = _flattened(image)
    except Exception:  # unreadable or refused: the judge gets the text preview only
        return None
    small.thumbnail((JUDGE_MAX_SIDE, JUDGE_MAX_SIDE))
    return _encoded(small, original)


def _flattened(image: Image.Image) -> Image.Image:
    if image.mode in {"RGBA", "LA", "PA"} or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return image.convert("RGB")


def _encoded(image: Image.Image, original: tuple[int, int]) -> JudgeImage | None:
    import io

    for media_type, options in (("image/png", {"format": "PNG", "optimize": True}),
                                ("image/jpeg", {"format": "JPEG", "quality": 85})):
        out = io.BytesIO()
        image.save(out, **options)  # type: ignore[arg-type]
        if out.tell() <= JUDGE_MAX_BYTES:
            return JudgeImage(media_type, out.getvalue(), *image.size, original)
    return None
