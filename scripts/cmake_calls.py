"""The one place Python writes CMake: a file of calls to the project's own CMake functions (the planted bugs' list
that tests/mutants.cmake includes, ./ladder try's <build>/try/variants.cmake). Every argument is a bracket
argument, which CMake takes literally: no variable, escape or list expansion, whatever a note or a path holds."""


def argument(value):
    value, eq = str(value), ""
    while f"]{eq}]" in value:
        eq += "="
    return f"[{eq}[{value}]{eq}]"


def write_calls(path, header, calls):
    """Writes `# header`, then one line per (function, arg, ...) call, to path (unless it holds exactly that)."""
    lines = [f"# {header}", *(f"{fn}({' '.join(argument(a) for a in args)})" for fn, *args in calls)]
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
