"""The stage pages' pictures (maint/diagrams.py), with no GPU: each SVG at most 830 px wide; each text at least 8 px as
shown, inside the picture (0.55 em a character), in no filled box it does not sit inside, at 4.5:1 (WCAG AA) or more
against what lies under it; the conflict colour told from orange. Each fault, planted, must be reported."""
import colorsys
import sys
import xml.etree.ElementTree as ET
from unittest import mock

from maint import diagrams as D
from maint.tests import verdict

COLUMN, MIN_PX, MIN_CONTRAST, EM = 830, 8, 4.5, 0.55
PLANTED = {  # a small picture with one fault: its width, and what is drawn on it
    "wide": (900, lambda p: p.text(10, 50, "fine", 12)), "small": (400, lambda p: p.text(10, 50, "tiny", 6)),
    "white on orange": (400, lambda p: (p.cell(10, 10, 60, 30, D.ORANGE),
                                        p.text(40, 30, "label", 10, "middle", D.WHITE))),
    "into a box": (400, lambda p: (p.cell(100, 30, 60, 30, D.SKY),
                                   p.text(20, 50, "a label that runs on into the cell", 11))),
    "overflow": (400, lambda p: p.text(300, 50, "a sentence far too long to fit in what is left of the picture", 12)),
}

def problems(name, text):
    root = ET.fromstring(text)
    width, rects = float(root.get("width")), []  # the filled rectangles, the panel first
    out = [f"{name}: {width:.0f} px wide, more than a {COLUMN} px column"] if width > COLUMN else []
    for el in root.iter():
        if el.tag.endswith("}rect") and el.get("fill", "none") != "none":
            rects.append((*(float(el.get(k)) for k in ("x", "y", "width", "height")), el.get("fill")))
        elif el.tag.endswith("}text"):
            size, x, y, words = float(el.get("font-size", root.get("font-size"))), float(el.get("x")), \
                float(el.get("y")), el.text or ""
            anchor, ink, extent = el.get("text-anchor", "start"), el.get("fill", D.INK), EM * size * len(words)
            shown = size * min(1.0, COLUMN / width)
            lo = x - {"start": 0, "middle": extent / 2, "end": extent}[anchor]
            px, py = x if anchor == "middle" else lo + min(extent, 3 * size) / 2, y - 0.35 * size  # the ink's middle
            under = ([D.WHITE] + [f for rx, ry, rw, rh, f in rects[1:] if rx <= px <= rx + rw and ry <= py <= ry + rh]
                     )[-1]
            (l, t, r, b), into = (lo, y - 0.8 * size, lo + extent, y), None
            for rx, ry, rw, rh, fill in rects[1:]:  # a filled box it meets but does not sit inside
                if fill != D.WHITE and rx < r and l < rx + rw and ry < b and t < ry + rh and not (
                        rx <= l + 1 and r - 1 <= rx + rw and ry <= t + 1 and b - 1 <= ry + rh):
                    into = into or f" runs into a {fill} box at ({rx:.0f}, {ry:.0f})"
            ratio = D.contrast(ink, under)
            out += [f"{name}: '{words[:40]}'{message}" for failed, message in (
                (shown < MIN_PX, f" is {shown:.1f} px as shown, under {MIN_PX} px"),
                (lo < 0 or r > width + 1, f" runs past the picture's edge ({lo:.0f} to {r:.0f} of {width:.0f} px)"),
                (into, into), (ratio < MIN_CONTRAST, f": {ink} on {under}, contrast {ratio:.1f}:1, under "
                                                    f"{MIN_CONTRAST}:1"))
                if failed]
    return out

def colour_problems():
    hue = [colorsys.rgb_to_hsv(*(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] * 360
           for c in (D.CONFLICT, D.ORANGE)]
    apart, ratio = min(abs(hue[0] - hue[1]), 360 - abs(hue[0] - hue[1])), D.contrast(D.CONFLICT, D.ORANGE)
    return [f"the conflict colour {D.CONFLICT} is close to orange {D.ORANGE} (contrast {ratio:.1f}:1, {apart:.0f} "
            f"degrees of hue apart)"] if ratio < 1.5 or apart < 60 else []

def main():
    found = [p for name, text in D.drawn().items() for p in problems(name, text)] + colour_problems()
    for fault, (width, draw) in PLANTED.items():
        draw(picture := D.Svg(100, "planted", width=width))
        found += [] if problems(fault, picture.svg()) else [f"a picture with a planted fault passes: {fault}"]
    with mock.patch.object(D, "CONFLICT", "#E09F00"):
        found += [] if colour_problems() else ["a planted conflict colour next to orange passes"]
    return verdict("pictures", found, f"{len(D.DIAGRAMS)} legible; {len(PLANTED) + 1} planted faults reported")

if __name__ == "__main__":
    sys.exit(main())
