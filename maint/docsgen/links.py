"""Links: every relative link and #anchor of README.md and docs/ resolves."""
import re

from .base import ROOT


LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def without_fences(text):
    """Markdown without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def without_code(text):
    """Markdown without fenced code blocks and inline code: what a reader sees as prose, links included."""
    return re.sub(r"`[^`\n]*`", "", without_fences(text))


def slug(heading):
    """GitHub's anchor for a heading: its visible text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r" ", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(text):
    """Every anchor a page defines: its headings (numbered -1, -2 when repeated, as GitHub does) and <a id>."""
    found, seen = set(), {}
    for line in without_fences(text).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else f"{base}-{k}")
    return found | set(HTML_ANCHOR.findall(text))


def check_links(texts):
    """texts: {path: Markdown}. Every relative link's file exists and every #anchor is on its page; web links are
    not followed (this is a CPU test without a network)."""
    problems, cache = [], {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(texts[path] if path in texts else path.read_text())
        return cache[path]

    for page, text in texts.items():
        for m in LINK.finditer(without_code(text)):
            target = m.group(2)
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            rel = page.relative_to(ROOT)
            if file_part and not dest.exists() and dest not in texts:
                problems.append(f"{rel}: the link [{m.group(1)}]({target}) points to a file that does not exist")
            elif anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                problems.append(f"{rel}: the link [{m.group(1)}]({target}) names an anchor #{anchor} that "
                                f"{dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest.name} does not have")
    return problems


PROJECT_PATH = re.compile(r"(?<![\w/.])((?:scripts|tests|maint|common|cmake|cpu_baseline|docs|\d\d_[a-z0-9_]+)/[\w./-]*\w"
                          r"\.(?:py|cpp|hpp|cu|cmake|md|json|csv|txt))\b")


def check_paths(texts):
    """texts: {path: Markdown}. Every file of the project that a page names, in prose or inline code, exists (a
    recorded run in a fenced block stays as the program printed it; a result file not measured yet is the pages'
    "not measured yet", which the structure checks judge)."""
    problems = []
    for page, text in texts.items():
        for m in PROJECT_PATH.finditer(without_fences(text)):
            if not (ROOT / m.group(1)).exists() and ROOT / m.group(1) not in texts and \
                    not m.group(1).startswith("docs/results/"):
                problems.append(f"{page.relative_to(ROOT)}: names {m.group(1)}, which the project does not have")
    return sorted(set(problems))
