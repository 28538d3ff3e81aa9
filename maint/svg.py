"""The SVG primitives and colours the stage pages' pictures (diagrams.py) are drawn with: an opaque panel, text,
boxes and lines, and a label ink chosen for contrast with the cell under it."""
import math
from xml.sax.saxutils import escape

WIDTH = 830  # no picture is wider than a README column on GitHub
INK, MUTED, LINE, IDLE = "#1f2328", "#57606a", "#d0d7de", "#eef1f4"
# Okabe-Ito colours, and for a conflict a wine far from their orange (named here as the captions name them)
ORANGE, SKY, BLUE, GREEN, PINK = "#E69F00", "#56B4E9", "#0072B2", "#009E73", "#CC79A7"
CONFLICT = "#882255"
NAMES = {ORANGE: "orange", SKY: "light blue", BLUE: "blue", GREEN: "green", PINK: "pink", CONFLICT: "wine",
         IDLE: "grey"}
# A bank's load, 1 to 32 words: light blue for one, then darker oranges.
DEGREE = {1: "#d6ecfa", 2: "#fde3b5", 4: "#fbbf6e", 8: "#f39a3b", 16: "#b8540f", 32: "#7a2e04"}
WHITE = "#ffffff"


def luminance(colour):
    """WCAG relative luminance of #rrggbb."""
    def channel(c):
        c = int(c, 16) / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(colour[i:i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ink_on(fill):
    """The label colour, ink or white, that contrasts more with fill."""
    return INK if contrast(INK, fill) >= contrast(WHITE, fill) else WHITE


def _fmt(v):
    return f"{v:.1f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


class Svg:
    """Just enough SVG: rectangles, text, lines and curves with arrowheads, on a white panel."""

    def __init__(self, width, height, title):
        self.width, self.height, self.title, self.body, self.arrows = width, height, title, [], set()

    def _el(self, tag, content=None, **attrs):
        a = "".join(f' {k.rstrip("_").replace("_", "-")}="{_fmt(v)}"' for k, v in attrs.items() if v is not None)
        self.body.append(f"<{tag}{a}/>" if content is None else f"<{tag}{a}>{escape(str(content))}</{tag}>")

    def rect(self, x, y, w, h, fill, stroke=LINE, width=None, dash=None):
        self._el("rect", x=x, y=y, width=w, height=h, fill=fill, stroke=stroke, stroke_width=width,
                 stroke_dasharray=dash)

    def text(self, x, y, s, size=12, anchor=None, fill=INK, weight=None):
        self._el("text", s, x=x, y=y, font_size=size if size != 12 else None, text_anchor=anchor, fill=fill,
                 font_weight=weight)

    def line(self, x1, y1, x2, y2, stroke=INK, width=1, dash=None, arrow=False):
        self._el("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, stroke_width=width, stroke_dasharray=dash,
                 marker_end=self._arrow(stroke) if arrow else None)

    def curve(self, x1, y1, x2, y2, lift, stroke=INK, width=1, arrow=True):
        """An arc from (x1, y1) to (x2, y2) bowing up by lift."""
        d = f"M{_fmt(x1)} {_fmt(y1)} C{_fmt(x1)} {_fmt(y1 - lift)} {_fmt(x2)} {_fmt(y2 - lift)} {_fmt(x2)} {_fmt(y2)}"
        self._el("path", d=d, fill="none", stroke=stroke, stroke_width=width,
                 marker_end=self._arrow(stroke) if arrow else None)

    def circle(self, x, y, r, fill, stroke=INK):
        self._el("circle", cx=x, cy=y, r=r, fill=fill, stroke=stroke)

    def _arrow(self, colour):
        self.arrows.add(colour)
        return f"url(#arrow{colour[1:]})"

    def cell(self, x, y, w, h, fill, label=None, size=9, stroke=LINE):
        self.rect(x, y, w, h, fill, stroke)
        if label is not None:
            self.text(x + w / 2, y + h / 2 + size * 0.35, label, size, "middle", ink_on(fill))

    def legend(self, x, y, items, size=11):
        """items: [(colour, words)], in one row."""
        for colour, words in items:
            self.rect(x, y - 9, 12, 12, colour)
            self.text(x + 17, y + 1, words, size)
            x += 17 + 6.3 * len(words) + 22

    def svg(self):
        defs = "".join(f'<marker id="arrow{c[1:]}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" '
                       f'markerHeight="6" orient="auto"><path d="M0 0L8 4L0 8z" fill="{c}"/></marker>'
                       for c in sorted(self.arrows))
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="Helvetica, Arial, sans-serif" '
                f'font-size="12" role="img">\n<title>{escape(self.title)}</title>\n'
                + (f"<defs>{defs}</defs>\n" if defs else "")
                + f'<rect x="0.5" y="0.5" width="{self.width - 1}" height="{self.height - 1}" rx="6" fill="#ffffff" '
                f'stroke="{LINE}"/>\n' + "\n".join(self.body) + "\n</svg>\n")


def span(numbers):
    """[0, 1, 2, 5] -> '0–2, 5'."""
    numbers, out = sorted(numbers), []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in out)


def degree_fill(n):
    return DEGREE[min(DEGREE, key=lambda d: abs(math.log2(d) - math.log2(n)))] if n else "#ffffff"


def warps_of(threads, warp=32):
    """'3 warps': how many warps the threads belong to, as a caption says it."""
    n = len({t // warp for t in threads})
    return f"{n} warp{'s' * (n > 1)}"
