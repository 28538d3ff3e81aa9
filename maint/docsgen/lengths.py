"""Reader-first lengths: the prose a reader meets before the folded evidence, in words, and the tables left open.
Code blocks, tables, headings, pictures and whatever sits inside <details> are not prose here."""
import re

from scripts.stages import ladder_stages, role

# page (as rendered, relative to the project): (the most words of prose, the most open tables; None: no limit)
LIMITS = {"README.md": (1000, None), "docs/method.md": (3000, None), "docs/stages/07_multiblock.md": (1500, 4)}
STAGE_LIMITS = (1000, 4)
GEMM_LIMITS = (1200, 4)  # a GEMM rung's page (08, and a rung copied from it)
WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")


def unfolded(text):
    """A rendered page before its folded evidence, without what it folds or its code blocks."""
    text = text.split('<a id="evidence"></a>')[0]
    folded = re.compile(r"<details>(?:(?!<details>).)*?</details>", re.S)  # the innermost first: folds nest
    while folded.search(text):
        text = folded.sub("", text)
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def prose(text):
    """(words of prose, open tables) of a rendered page, before its folded evidence."""
    text = unfolded(text)
    words, tables, in_table = 0, 0, False
    for line in text.splitlines():
        if line.startswith("|"):
            tables += not in_table
            in_table = True
            continue
        in_table = False
        if not line.startswith(("#", "![", "<")):
            words += len(WORD.findall(re.sub(r"\]\([^)]*\)", "]", line)))
    return words, tables


def limits_of(page):
    if page in LIMITS or not page.startswith("docs/stages/"):
        return LIMITS.get(page)
    stage = page.rsplit("/", 1)[1].removesuffix(".md")
    return GEMM_LIMITS if stage in ladder_stages() and role(stage) == "gemm" else STAGE_LIMITS


def length_problems(rendered):
    """{page: text}: each page over its limit, with its count."""
    out = []
    for page, text in rendered.items():
        limit = limits_of(str(page))
        if limit is None:
            continue
        words, tables = prose(text)
        if words > limit[0]:
            out.append(f"{page}: {words} words of prose before its folded evidence, more than {limit[0]} (fold or cut)")
        if limit[1] is not None and tables > limit[1]:
            out.append(f"{page}: {tables} open tables, more than {limit[1]} (fold them, or move them to results.md)")
    return out
