#!/usr/bin/env python3
"""The stage pages' pictures (maint/diagrams.py), held to rules a reader can see. No GPU.

Every SVG is at most 830 px wide (a README column on GitHub, which shows a wider one scaled down); every text is
at least 8 px at the width it is shown; its extent, estimated at 0.55 em a character, stays inside the picture and
runs into no filled box it does not sit inside;
its contrast with what lies under it (the last filled rectangle drawn there, else the white panel) is at least
4.5:1 (WCAG AA); and the conflict colour is told from orange (at least 1.5:1 between the two, and of another hue).
A self-test plants each fault in a small picture and demands that it is reported.

  check_pictures.py
"""
import colorsys
import pathlib
import unittest
from unittest import mock
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[2]
from maint import diagrams, svg as S

COLUMN, MIN_PX, MIN_CONTRAST, EM = 830, 8, 4.5, 0.55
NS = "{http://www.w3.org/2000/svg}"


def problems(name, text):
    root = ET.fromstring(text)
    width = float(root.get("width"))
    scale = min(1.0, COLUMN / width)
    out = [f"{name}: {width:.0f} px wide, more than a {COLUMN} px column"] if width > COLUMN else []
    rects = []
    for el in root.iter():
        if el.tag == NS + "rect" and el.get("fill", "none") not in ("none",):
            rects.append((float(el.get("x")), float(el.get("y")), float(el.get("width")), float(el.get("height")),
                          el.get("fill")))
        elif el.tag == NS + "text":
            size = float(el.get("font-size", root.get("font-size", "12")))
            words, x, y = el.text or "", float(el.get("x")), float(el.get("y"))
            extent = EM * size * len(words)
            anchor = el.get("text-anchor", "start")
            lo = x - {"start": 0, "middle": extent / 2, "end": extent}[anchor]
            where = f"{name}: '{words[:40]}'"
            if size * scale < MIN_PX:
                out.append(f"{where} is {size * scale:.1f} px as shown, under {MIN_PX} px")
            if lo < 0 or lo + extent > width + 1:
                out.append(f"{where} runs past the picture's edge ({lo:.0f} to {lo + extent:.0f} of {width:.0f} px)")
            probe = (x if anchor == "middle" else lo + min(extent, 3 * size) / 2, y - 0.35 * size)
            under = "#ffffff"
            for rx, ry, rw, rh, fill in rects[1:]:  # the first is the panel
                if rx <= probe[0] <= rx + rw and ry <= probe[1] <= ry + rh:
                    under = fill
            box = (lo, y - 0.8 * size, lo + extent, y)
            for rx, ry, rw, rh, fill in rects[1:]:
                meets = rx < box[2] and box[0] < rx + rw and ry < box[3] and box[1] < ry + rh
                inside = rx <= box[0] + 1 and box[2] - 1 <= rx + rw and ry <= box[1] + 1 and box[3] - 1 <= ry + rh
                if meets and not inside and fill != "#ffffff":
                    out.append(f"{where} runs into a {fill} box at ({rx:.0f}, {ry:.0f})")
                    break
            ink = el.get("fill", S.INK)
            if S.contrast(ink, under) < MIN_CONTRAST:
                out.append(f"{where}: {ink} on {under}, contrast {S.contrast(ink, under):.1f}:1, under {MIN_CONTRAST}:1")
    return out


def colour_problems():
    hue = lambda c: colorsys.rgb_to_hsv(*(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] * 360  # noqa: E731
    apart = abs(hue(S.CONFLICT) - hue(S.ORANGE))
    apart = min(apart, 360 - apart)
    out = []
    if S.contrast(S.CONFLICT, S.ORANGE) < 1.5 or apart < 60:
        out.append(f"the conflict colour {S.CONFLICT} is close to orange {S.ORANGE} (contrast "
                   f"{S.contrast(S.CONFLICT, S.ORANGE):.1f}:1, {apart:.0f} degrees of hue apart)")
    return out


def planted(fault):
    """A small picture with one fault."""
    p = S.Svg(900 if fault == "wide" else 400, 100, "planted")
    if fault == "small":
        p.text(10, 50, "tiny", 6)
    elif fault == "white on orange":
        p.cell(10, 10, 60, 30, S.ORANGE)
        p.text(40, 30, "label", 10, "middle", "#ffffff")
    elif fault == "into a box":
        p.cell(100, 30, 60, 30, S.SKY)
        p.text(20, 50, "a label that runs on into the cell", 11)
    elif fault == "overflow":
        p.text(300, 50, "a sentence far too long to fit in what is left of the picture", 12)
    else:
        p.text(10, 50, "fine", 12)
    return p.svg()


class Pictures(unittest.TestCase):
    def test_every_picture_is_legible(self):
        found = [p for name, text in diagrams.drawn().items() for p in problems(name, text)]
        self.assertEqual(found, [], "\n".join(found))

    def test_conflict_colour_far_from_orange(self):
        self.assertEqual(colour_problems(), [])

    def test_planted_faults_are_reported(self):
        for fault in ("wide", "small", "white on orange", "overflow", "into a box"):
            with self.subTest(fault=fault):
                self.assertTrue(problems(fault, planted(fault)), f"a picture with a {fault} fault passes")
        with mock.patch.object(S, "CONFLICT", "#E09F00"):
            self.assertTrue(colour_problems(), "a conflict colour next to orange passes")


if __name__ == "__main__":
    unittest.main(verbosity=2)
