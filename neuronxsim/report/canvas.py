"""An RGB raster with rectangles and 6x10 bitmap text, drawn with NumPy."""

from __future__ import annotations

import numpy as np

from neuronxsim.report._font6x10 import CELL_HEIGHT, CELL_WIDTH, GLYPHS

# Glyph masks as boolean arrays, built once.
_MASKS = {c: np.array([[(row >> (CELL_WIDTH - 1 - x)) & 1 for x in range(CELL_WIDTH)] for row in rows], bool)
          for c, rows in GLYPHS.items()}


class Canvas:
    def __init__(self, width: int, height: int, background=(255, 255, 255)):
        self.pixels = np.empty((height, width, 3), np.uint8)
        self.pixels[:] = background

    @property
    def width(self) -> int:
        return self.pixels.shape[1]

    @property
    def height(self) -> int:
        return self.pixels.shape[0]

    def rect(self, x0: int, y0: int, x1: int, y1: int, color) -> None:
        """Fills [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, x0), min(self.width, x1)
        y0, y1 = max(0, y0), min(self.height, y1)
        if x0 < x1 and y0 < y1:
            self.pixels[y0:y1, x0:x1] = color

    def text(self, x: int, y: int, s: str, color=(0, 0, 0)) -> int:
        """Draws `s` with its top-left corner at (x, y); returns the x after the text.
        Characters outside printable ASCII are drawn as '?'."""
        for ch in s:
            mask = _MASKS.get(ch, _MASKS["?"])
            x0, y0 = x, y
            xs, ys = slice(max(0, x0), min(self.width, x0 + CELL_WIDTH)), slice(max(0, y0), min(self.height, y0 + CELL_HEIGHT))
            sub = mask[ys.start - y0: ys.stop - y0, xs.start - x0: xs.stop - x0]
            if sub.size:
                self.pixels[ys, xs][sub] = color
            x += CELL_WIDTH
        return x

    @staticmethod
    def text_width(s: str) -> int:
        return CELL_WIDTH * len(s)
