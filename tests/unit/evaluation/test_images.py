from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from PIL import Image

from selfcorrect_action.evaluation import images
from selfcorrect_action.evaluation.images import check_image
from selfcorrect_action.taxonomy import Check

from .conftest import REAL_ARTIFACTS, draw_chart, jpeg_declaring, png_declaring, spec


def _by_aspect(results: list[Check]) -> dict[str, Check]:
    return {check.name.split(": ", 1)[1]: check for check in results}


def _only_failure(results: list[Check]) -> str:
    failing = [check for check in results if not check.passed]
    assert len(failing) == 1, results
    return failing[0].detail


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("matplotlib_line_chart.png", "png"),
        ("matplotlib_line_chart_transparent.png", "png"),
        ("matplotlib_line_chart.jpg", "jpeg"),
    ],
)
def test_real_matplotlib_charts_pass(name: str, kind: str, tmp_path: Path) -> None:
    file = shutil.copy(REAL_ARTIFACTS / name, tmp_path / name)
    results = check_image(spec(name, kind, non_blank=True), Path(file))
    assert [c.passed for c in results] == [True, True], results
    assert "360x252" in results[0].detail


def test_empty_matplotlib_figure_is_blank(tmp_path: Path) -> None:
    file = Path(shutil.copy(REAL_ARTIFACTS / "matplotlib_empty_figure.png", tmp_path / "c.png"))
    detail = _only_failure(check_image(spec("c.png", "png", non_blank=True), file))
    assert "expected a non-blank image" in detail
    assert "mean grey level 255" in detail


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P"])
def test_drawn_chart_passes_in_every_mode(mode: str, tmp_path: Path) -> None:
    image = draw_chart(mode="RGBA" if mode == "RGBA" else "RGB")
    if mode in {"L", "P"}:
        image = image.convert(mode)
    file = tmp_path / "chart.png"
    image.save(file)
    results = check_image(spec("chart.png", "png", non_blank=True), file)
    assert all(c.passed for c in results), results


@pytest.mark.parametrize(
    ("kind", "fmt", "colour"),
    [("png", "PNG", (200, 30, 30)), ("jpeg", "JPEG", (12, 90, 200)), ("png", "PNG", (0, 0, 0))],
)
def test_solid_colour_image_is_blank(
    kind: str, fmt: str, colour: tuple[int, int, int], tmp_path: Path
) -> None:
    file = tmp_path / "solid.img"
    Image.new("RGB", (640, 480), colour).save(file, fmt)
    results = check_image(spec("solid.img", kind, non_blank=True), file)
    assert results[0].passed
    assert "nearly uniform image: std dev 0." in _only_failure(results)


def test_single_dot_on_white_is_blank(tmp_path: Path) -> None:
    image = Image.new("RGB", (800, 600), "white")
    image.putpixel((400, 300), (0, 0, 0))
    file = tmp_path / "dot.png"
    image.save(file)
    assert "non-blank" in _only_failure(check_image(spec("dot.png", "png", non_blank=True), file))


def test_fully_transparent_image_is_blank_whatever_colour_hides_under_alpha(
    tmp_path: Path,
) -> None:
    image = Image.new("RGBA", (300, 200), (0, 0, 0, 0))
    for x in range(0, 300, 2):  # a pattern that alpha 0 hides completely
        image.putpixel((x, 10), (255, 0, 0, 0))
    file = tmp_path / "clear.png"
    image.save(file)
    assert "non-blank" in _only_failure(check_image(spec("clear.png", "png", non_blank=True), file))


def test_blankness_is_not_checked_unless_asked(tmp_path: Path) -> None:
    file = tmp_path / "solid.png"
    Image.new("RGB", (64, 64), "white").save(file)
    results = check_image(spec("solid.png", "png"), file)
    assert [c.name for c in results] == ["solid.png: kind"]
    assert results[0].passed


def test_text_saved_as_png_names_what_was_found(tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    file.write_text("Error: no data for 2024\nTraceback ...\n")
    detail = _only_failure(check_image(spec("chart.png", "png"), file))
    expected = "expected a PNG image, found text starting 'Error: no data for 2024 Traceback ...'"
    assert detail == f"chart.png: {expected}"


def test_jpeg_where_png_was_expected(tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    draw_chart().save(file, "JPEG")
    assert _only_failure(check_image(spec("chart.png", "png"), file)) == (
        "chart.png: expected a PNG image, found a JPEG image"
    )


def test_png_where_jpeg_was_expected(tmp_path: Path) -> None:
    file = tmp_path / "photo.jpg"
    draw_chart().save(file, "PNG")
    detail = _only_failure(check_image(spec("photo.jpg", "jpeg"), file))
    assert detail.endswith("expected a JPEG image, found a PNG image")


def test_empty_file(tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    file.write_bytes(b"")
    assert _only_failure(check_image(spec("chart.png", "png"), file)).endswith("an empty file")


def test_png_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    file = tmp_path / "bomb.png"
    file.write_bytes(png_declaring(100_000, 100_000))
    assert file.stat().st_size < 2_000
    started = time.perf_counter()
    detail = _only_failure(check_image(spec("bomb.png", "png", non_blank=True), file))
    assert time.perf_counter() - started < 0.5
    assert "100000x100000 = 10,000,000,000 pixels" in detail
    assert "decompression bomb" in detail


def test_png_just_above_our_ceiling_but_below_pillows_is_refused(tmp_path: Path) -> None:
    # 7000x6000 = 42 Mpx: Pillow's own guard (89 Mpx) would decode it.
    file = tmp_path / "big.png"
    file.write_bytes(png_declaring(7000, 6000))
    assert "above the 40,000,000-pixel ceiling" in _only_failure(
        check_image(spec("big.png", "png"), file)
    )


@pytest.mark.parametrize(("width", "height"), [(65_000, 65_000), (7000, 7000)])
def test_jpeg_declaring_huge_dimensions_is_refused(width: int, height: int, tmp_path: Path) -> None:
    file = tmp_path / "bomb.jpg"
    file.write_bytes(jpeg_declaring(tmp_path, width, height))
    started = time.perf_counter()
    detail = _only_failure(check_image(spec("bomb.jpg", "jpeg", non_blank=True), file))
    assert time.perf_counter() - started < 0.5
    assert "decompression bomb" in detail


def test_ceiling_is_a_module_constant(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    draw_chart((400, 300)).save(file)
    monkeypatch.setattr(images, "PIXEL_CEILING", 400 * 300 - 1)
    assert "ceiling" in _only_failure(check_image(spec("chart.png", "png"), file))


@pytest.mark.parametrize(("kind", "fmt"), [("png", "PNG"), ("jpeg", "JPEG")])
def test_truncated_image_fails_cleanly(kind: str, fmt: str, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    draw_chart((800, 600)).save(whole, fmt)
    file = tmp_path / "cut"
    data = whole.read_bytes()
    file.write_bytes(data[: len(data) // 2])
    detail = _only_failure(check_image(spec("cut", kind, non_blank=True), file))
    assert f"expected a valid {fmt} image, found bytes that do not decode" in detail


def test_png_magic_followed_by_garbage(tmp_path: Path) -> None:
    file = tmp_path / "x.png"
    file.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    assert "no IHDR chunk" in _only_failure(check_image(spec("x.png", "png"), file))


def test_png_with_corrupt_compressed_data(tmp_path: Path) -> None:
    file = tmp_path / "x.png"
    file.write_bytes(png_declaring(100, 100, idat=b"this is not zlib data"))
    assert "do not decode" in _only_failure(check_image(spec("x.png", "png"), file))


def test_zero_width_png(tmp_path: Path) -> None:
    file = tmp_path / "x.png"
    file.write_bytes(png_declaring(0, 100))
    assert "0x100 pixels (empty image)" in _only_failure(check_image(spec("x.png", "png"), file))


def test_by_aspect_names(tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    draw_chart().save(file)
    results = _by_aspect(check_image(spec("chart.png", "png", non_blank=True), file))
    assert set(results) == {"kind", "not blank"}


def test_a_judge_image_is_downscaled_and_flattened(tmp_path: Path) -> None:
    from PIL import Image as PILImage

    from selfcorrect_action.evaluation.images import JUDGE_MAX_SIDE, judge_image

    path = tmp_path / "big.png"
    image = PILImage.new("RGBA", (2400, 1200), (0, 0, 0, 0))  # fully transparent
    image.paste((200, 30, 30, 255), (100, 100, 600, 1100))
    image.save(path)
    sent = judge_image(path, "png")
    assert sent is not None and sent.media_type == "image/png"
    assert (sent.width, sent.height) == (JUDGE_MAX_SIDE, JUDGE_MAX_SIDE // 2)
    assert sent.original == (2400, 1200)
    shown = PILImage.open(__import__("io").BytesIO(sent.data))
    assert shown.mode == "RGB" and shown.getpixel((0, 0)) == (255, 255, 255)  # on white


def test_a_bomb_or_a_fake_is_never_decoded_for_the_judge(tmp_path: Path) -> None:
    import struct
    import zlib

    from selfcorrect_action.evaluation.images import judge_image

    bomb = tmp_path / "bomb.png"
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    bomb.write_bytes(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
                     + struct.pack(">I", zlib.crc32(chunk)))
    assert judge_image(bomb, "png") is None
    text = tmp_path / "text.png"
    text.write_text("not an image")
    assert judge_image(text, "png") is None
    assert judge_image(text, "csv") is None
