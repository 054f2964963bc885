"""The history's charts as one PNG, for chat: Slack's image blocks and Discord's attachments show no SVG.

    data = chart_png.png(charts.of_history(history, name))   # b"\\x89PNG…": the four charts, two by two

Drawn with Pillow from the same layout as the page's SVG (charts.layout), at twice its size so that
it stays sharp on a phone. Pillow (7 MB as a wheel, 22 MB installed, against matplotlib and numpy's
174) is imported only here, when a picture is asked for: a bot nobody asks keeps its memory. No
browser runs: a page rendered headless would need Chromium on every install.

Its text is drawn in the first font found of FONTS, those with Chinese and Japanese first (a name
in 李华 needs one); with none, Pillow's own, which draws Latin only.
"""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path

from bot.web.charts import BAR, FONT_SIZE, WIDTH, Chart, Drawing, layout

#: Fonts looked for, in order: faces with CJK (Debian's Noto and WenQuanYi, macOS's), then DejaVu.
FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/System/Library/Fonts/PingFang.ttc",
    "/System/Library/Fonts/Hiragino Sans GB.ttc",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
)
SCALE = 2
GAP = 24
INK = (34, 34, 34)
FAINT = (102, 102, 102)
RULE = (187, 187, 187)
PAPER = (255, 255, 255)


def _pillow():
    """Pillow's modules, imported at the first picture drawn."""
    from PIL import Image, ImageDraw, ImageFont  # noqa: PLC0415 (memory: only a bot asked for a picture pays it)

    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=8)
def _font(size: int):
    _, _, ImageFont = _pillow()
    for path in FONTS:
        if Path(path).is_file():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _draw(image, drawing: Drawing, left: float, top: float) -> None:
    Image, ImageDraw, _ = _pillow()
    pen = ImageDraw.Draw(image)

    def at(x: float, y: float) -> tuple[float, float]:
        return (left + x) * SCALE, (top + y) * SCALE

    for x1, y1, x2, y2 in drawing.rules:
        pen.line([at(x1, y1), at(x2, y2)], fill=RULE, width=SCALE)
    for r in drawing.rects:
        if r.w > 0 and r.h > 0:
            pen.rectangle([at(r.x, r.y), at(r.x + r.w, r.y + r.h)], fill=_rgb(BAR))
    for t in drawing.labels:
        font = _font((15 if t.bold else FONT_SIZE) * SCALE)
        colour = FAINT if t.faint else INK
        if t.slanted:  # drawn level on a clear layer, turned 45°, its end put at (x, y)
            box = font.getbbox(t.text, anchor="ls")
            layer = Image.new("RGBA", (box[2] - box[0] + 4, box[3] - box[1] + 4), (0, 0, 0, 0))
            ImageDraw.Draw(layer).text((2 - box[0], 2 - box[1]), t.text, font=font, fill=colour, anchor="ls")
            turned = layer.rotate(45, expand=True, resample=Image.Resampling.BICUBIC)
            x, y = at(t.x, t.y)
            image.paste(turned, (int(x - turned.width), int(y - SCALE * 4)), turned)
            continue
        anchor = {"start": "ls", "middle": "ms", "end": "rs"}[t.anchor]
        pen.text(at(t.x, t.y), t.text, font=font, fill=colour, anchor=anchor)


def png(charts: list[Chart]) -> bytes:
    """`charts` in one PNG, two a row, each as the page draws it."""
    Image, _, _ = _pillow()
    drawings = [layout(c) for c in charts]
    rows = [drawings[i : i + 2] for i in range(0, len(drawings), 2)]
    heights = [max(d.height for d in row) for row in rows]
    width = 2 * WIDTH + 3 * GAP
    height = sum(heights) + GAP * (len(rows) + 1)
    image = Image.new("RGB", (int(width * SCALE), int(height * SCALE)), PAPER)
    top: float = GAP
    for row, row_height in zip(rows, heights, strict=True):
        for i, drawing in enumerate(row):
            _draw(image, drawing, GAP + i * (WIDTH + GAP), top)
        top += row_height + GAP
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()
