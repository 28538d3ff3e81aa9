#!/usr/bin/env python3
"""The stage pages' pictures (maint/diagrams.py), held to rules a reader can see. No GPU.

Every SVG is at most 830 px wide (a README column on GitHub, which shows a wider one scaled down); every text is at
least 8 px at the width it is shown; its extent, estimated at 0.55 em a character, stays inside the picture and runs
into no filled box it does not sit inside; its contrast with what lies under it (the last filled rectangle drawn there,
else the white panel) is at least 4.5:1 (WCAG AA); and the conflict colour is told from orange (at least 1.5:1 between
the two, and of another hue). A self-test plants each fault in a small picture and demands that it is reported.
"""
import colorsys
import unittest
from unittest import mock
import xml.etree.ElementTree as ET

from maint import diagrams as D

COLUMN, MIN_PX, MIN_CONTRAST, EM = 830, 8, 4.5, 0.55
NS = "{http://www.w3.org/2000/svg}"
PLANTED = {  # a small picture with one fault: its width, and what is drawn on it
    "wide": (900, lambda p: p.text(10, 50, "fine", 12)),
    "small": (400, lambda p: p.text(10, 50, "tiny", 6)),
    "white on orange": (400, lambda p: (p.cell(10, 10, 60, 30, D.ORANGE),
                                        p.text(40, 30, "label", 10, "middle", D.WHITE))),
    "into a box": (400, lambda p: (p.cell(100, 30, 60, 30, D.SKY),
                                   p.text(20, 50, "a label that runs on into the cell", 11))),
    "overflow": (400, lambda p: p.text(300, 50, "a sentence far too long to fit in what is left of the picture", 12)),
}


def problems(name, text):
    root = ET.fromstring(text)
    width = float(root.get("width"))
    scale, rects = min(1.0, COLUMN / width), []  # the filled rectangles, the panel first
    out = [f"{name}: {width:.0f} px wide, more than a {COLUMN} px column"] if width > COLUMN else []
    for el in root.iter():
        if el.tag == NS + "rect" and el.get("fill", "none") != "none":
            rects.append((*(float(el.get(k)) for k in ("x", "y", "width", "height")), el.get("fill")))
        elif el.tag == NS + "text":
            size = float(el.get("font-size", root.get("font-size", "12")))
            words, x, y, anchor = el.text or "", float(el.get("x")), float(el.get("y")), el.get("text-anchor", "start")
            extent = EM * size * len(words)
            lo = x - {"start": 0, "middle": extent / 2, "end": extent}[anchor]
            where, probe = f"{name}: '{words[:40]}'", (x if anchor == "middle" else lo + min(extent, 3 * size) / 2,
                                                       y - 0.35 * size)
            if size * scale < MIN_PX:
                out.append(f"{where} is {size * scale:.1f} px as shown, under {MIN_PX} px")
            if lo < 0 or lo + extent > width + 1:
                out.append(f"{where} runs past the picture's edge ({lo:.0f} to {lo + extent:.0f} of {width:.0f} px)")
            under = ([D.WHITE] + [f for rx, ry, rw, rh, f in rects[1:] if rx <= probe[0] <= rx + rw
                                  and ry <= probe[1] <= ry + rh])[-1]
            box = (lo, y - 0.8 * size, lo + extent, y)
            for rx, ry, rw, rh, fill in rects[1:]:
                meets = rx < box[2] and box[0] < rx + rw and ry < box[3] and box[1] < ry + rh
                inside = rx <= box[0] + 1 and box[2] - 1 <= rx + rw and ry <= box[1] + 1 and box[3] - 1 <= ry + rh
                if meets and not inside and fill != D.WHITE:
                    out.append(f"{where} runs into a {fill} box at ({rx:.0f}, {ry:.0f})")
                    break
            ink = el.get("fill", D.INK)
            if D.contrast(ink, under) < MIN_CONTRAST:
                out.append(f"{where}: {ink} on {under}, contrast {D.contrast(ink, under):.1f}:1, under {MIN_CONTRAST}:1")
    return out


def colour_problems():
    hue = [colorsys.rgb_to_hsv(*(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] * 360 for c in (D.CONFLICT, D.ORANGE)]
    apart = min(abs(hue[0] - hue[1]), 360 - abs(hue[0] - hue[1]))
    ratio = D.contrast(D.CONFLICT, D.ORANGE)
    return [f"the conflict colour {D.CONFLICT} is close to orange {D.ORANGE} (contrast {ratio:.1f}:1, {apart:.0f} "
            f"degrees of hue apart)"] if ratio < 1.5 or apart < 60 else []


class Pictures(unittest.TestCase):
    def test_every_picture_is_legible(self):
        found = [p for name, text in D.drawn().items() for p in problems(name, text)]
        self.assertEqual(found, [], "\n".join(found))

    def test_conflict_colour_far_from_orange(self):
        self.assertEqual(colour_problems(), [])

    def test_planted_faults_are_reported(self):
        for fault, (width, draw) in PLANTED.items():
            with self.subTest(fault=fault):
                draw(picture := D.Svg(100, "planted", width=width))
                self.assertTrue(problems(fault, picture.svg()), f"a picture with a {fault} fault passes")
        with mock.patch.object(D, "CONFLICT", "#E09F00"):
            self.assertTrue(colour_problems(), "a conflict colour next to orange passes")


if __name__ == "__main__":
    unittest.main(verbosity=2)
