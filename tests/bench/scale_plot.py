# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small line plot as a PNG, with Python's standard library alone (the
scale run's figure: no plotting package is needed where it runs).

plot(path, title, xs, panels): one panel per (label, ys, limit) under one
another, sharing the x axis (the stream counts); @limit, when not None,
is drawn as a dashed line (one frame time, for the p99 panel).
"""
import math
import struct
import zlib

# 5x7 glyphs, a row a string, "#" lit
_FONT = {
    "0": [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
    "1": ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
    "2": [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
    "3": ["####.", "....#", "....#", ".###.", "....#", "....#", "####."],
    "4": ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
    "5": ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
    "6": [".###.", "#....", "#....", "####.", "#...#", "#...#", ".###."],
    "7": ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
    "8": [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
    "9": [".###.", "#...#", "#...#", ".####", "....#", "....#", ".###."],
    ".": [".....", ".....", ".....", ".....", ".....", ".##..", ".##.."],
    "-": [".....", ".....", ".....", "#####", ".....", ".....", "....."],
    ":": [".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."],
    ",": [".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."],
    "/": ["....#", "...#.", "...#.", "..#..", ".#...", ".#...", "#...."],
    "(": ["...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."],
    ")": [".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."],
    " ": ["....."] * 7,
    "A": [".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
    "B": ["####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."],
    "C": [".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."],
    "D": ["####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."],
    "E": ["#####", "#....", "#....", "####.", "#....", "#....", "#####"],
    "F": ["#####", "#....", "#....", "####.", "#....", "#....", "#...."],
    "G": [".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".###."],
    "H": ["#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
    "I": [".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
    "J": ["..###", "...#.", "...#.", "...#.", "#..#.", "#..#.", ".##.."],
    "K": ["#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"],
    "L": ["#....", "#....", "#....", "#....", "#....", "#....", "#####"],
    "M": ["#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"],
    "N": ["#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#", "#...#"],
    "O": [".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."],
    "P": ["####.", "#...#", "#...#", "####.", "#....", "#....", "#...."],
    "Q": [".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"],
    "R": ["####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"],
    "S": [".####", "#....", "#....", ".###.", "....#", "....#", "####."],
    "T": ["#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."],
    "U": ["#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."],
    "V": ["#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."],
    "W": ["#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."],
    "X": ["#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"],
    "Y": ["#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."],
    "Z": ["#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"],
}

W, H = 720, 520
_BG, _AXIS, _GRID = (255, 255, 255), (40, 40, 40), (225, 225, 225)
_COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44)]


class _Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(bytes(_BG) * (w * h))

    def dot(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def line(self, x0, y0, x1, y1, c, dash=0, width=1):
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, n = dx + dy, 0
        while True:
            if not dash or (n // dash) % 2 == 0:
                for k in range(width):
                    self.dot(x0, y0 + k, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy
            n += 1

    def text(self, x, y, s, c=_AXIS, scale=1):
        for ch in s.upper():
            g = _FONT.get(ch, _FONT[" "])
            for r, row in enumerate(g):
                for col, bit in enumerate(row):
                    if bit == "#":
                        for a in range(scale):
                            for b in range(scale):
                                self.dot(x + col * scale + a,
                                         y + r * scale + b, c)
            x += 6 * scale

    def png(self, path):
        raw = b"".join(b"\0" + bytes(self.px[y * self.w * 3:
                                             (y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8,
                                               2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def _nice_top(v):
    """The least 4 x (1, 2, 2.5 or 5 x 10^k) at or above @v: round ticks."""
    step = v / 4
    mag = 10 ** math.floor(math.log10(step))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= step:
            return 4 * m * mag
    return v


def _fmt(v):
    if v >= 10 or v == int(v):
        return "%.0f" % v
    return ("%.1f" % v) if v >= 1 else ("%.2f" % v)


def plot(path, title, xs, panels, xlabel="STREAMS"):
    c = _Canvas(W, H)
    # twice the size where it fits the width (6 pixels a character)
    c.text(60, 10, title, scale=2 if 60 + 12 * len(title) <= W else 1)
    left, right = 80, W - 30
    top, gap = 44, 30
    ph = (H - top - 50 - gap * (len(panels) - 1)) // len(panels)
    xmin, xmax = min(xs), max(xs)
    xspan = (xmax - xmin) or 1

    def X(v):
        return left + int((v - xmin) * (right - left) / xspan)
    for pi, (label, ys, limit) in enumerate(panels):
        y0 = top + pi * (ph + gap)
        vals = [v for v in ys if v is not None] + \
            ([limit] if limit is not None else [])
        ymax = _nice_top(max(vals) * 1.05 if vals and max(vals) > 0 else 1.0)

        def Y(v):
            return y0 + ph - int(v * ph / ymax)
        for k in range(5):
            gy = y0 + ph - k * ph // 4
            c.line(left, gy, right, gy, _GRID)
            c.text(left - 8 - 6 * len(_fmt(ymax * k / 4)), gy - 3,
                   _fmt(ymax * k / 4))
        c.line(left, y0, left, y0 + ph, _AXIS)
        c.line(left, y0 + ph, right, y0 + ph, _AXIS)
        c.text(left + 6, y0 + 2, label, _COLOURS[pi % len(_COLOURS)])
        if limit is not None:
            c.line(left, Y(limit), right, Y(limit), (120, 120, 120), dash=6)
        pts = [(X(x), Y(y)) for x, y in zip(xs, ys) if y is not None]
        for (a, b), (d, e) in zip(pts, pts[1:]):
            c.line(a, b, d, e, _COLOURS[pi % len(_COLOURS)], width=2)
        for a, b in pts:
            for k in range(-2, 3):
                c.line(a - 2, b + k, a + 2, b + k,
                       _COLOURS[pi % len(_COLOURS)])
    base = top + len(panels) * (ph + gap) - gap
    for x in xs:
        c.text(X(x) - 3 * len(str(x)), base + 8, str(x))
    c.text((left + right) // 2 - 3 * len(xlabel), base + 24, xlabel)
    c.png(path)
