"""The values ./ladder's commands take, checked before anything is installed or built, in the stages' own words.

The stage binaries are the authority on their options (common/options.cpp), but they do not exist before the first
build; these checks follow theirs, and the test runner.values_agree holds the two together on the same values."""
import argparse
import os
import pathlib
import re
import tempfile

from .stages import GEMM, ROOT, UsageProblem, combines, constants, has_stream, stage_file

MAX_SIZE = 2 ** 36        # -n: sizes run from 1 to 2^36 (common/options.cpp, kMaxSize)
MAX_GEMM_DIM = 1000000    # -m/-n/-k/--size of the GEMM (kMaxGemmDim)
MAX_U64 = 2 ** 64 - 1
# A constant ./ladder try changes is a count in the kernel (loads in flight, ...): a whole number from 1 to 64.
# Zero or a negative count does not compile; much more than 64 only spills registers.
CONSTANT_RANGE = (1, 64)

# Numbers that are numbers, though not sizes: negative, or too large for 64 bits. Out of range, not "not a size".
_WELL_FORMED = re.compile(r"-\d+|\d+|\d+\*2\^\d+|2\^\d+|\d+[eE]\d+")
_NEGATIVE = re.compile(r"-\d+")


def writable_directory(option, path):
    """A directory option (--build, --save) is proven usable before anything is installed, built or run: a directory
    that exists must be one, and a probe directory must be makeable (and is removed again) in it or, for one still
    to be made, in its nearest existing parent; UsageProblem in one line otherwise. Nothing is left behind."""
    p = pathlib.Path(path).absolute()
    if p.exists() and not p.is_dir():
        raise UsageProblem(f"{option} {path}: that is a file, not a directory")
    base = p
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise UsageProblem(f"{option} {path}: {base} is a file, so the directory cannot be made")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".ladder-probe-", dir=base))
    except OSError as e:
        what = "is not writable" if base == p else f"cannot be made in {base} ({e.strerror})"
        raise UsageProblem(f"{option} {path}: the directory {what}") from None


def count(text):
    """"4096", "2^28", "3*2^20", "1e6" -> the whole number, or None (as parse_count in common/options.cpp)."""
    s = text.strip()
    if re.fullmatch(r"\d{1,19}", s):
        return int(s)
    m = re.fullmatch(r"(?:(\d{1,19})\*)?2\^(\d{1,19})", s)
    if m:
        factor, exponent = int(m.group(1) or 1), int(m.group(2))
        value = factor << exponent if exponent <= 62 else None
        return value if value is not None and value <= MAX_U64 else None
    m = re.fullmatch(r"(\d{1,19})[eE](\d{1,19})", s)
    if m and int(m.group(2)) <= 18:
        value = int(m.group(1)) * 10 ** int(m.group(2))
        return value if value <= MAX_U64 else None
    return None


def _is_power_of_two(v):
    return v > 0 and v & (v - 1) == 0


def _size_item(item, whole_text):
    """One item of a size list: the problem with it, or None."""
    if ".." in item:
        lo_text, hi_text = (x.strip() for x in item.split("..", 1))
        lo, hi = count(lo_text), count(hi_text)
        if lo is not None and hi is not None:
            if not _is_power_of_two(lo) or not _is_power_of_two(hi):
                return f"'{item}': a range a..b doubles from a to b, so both ends are powers of two (2^10..2^30)"
            if lo > hi:
                return f"'{item}' runs backwards: a range goes from the smaller power of two up ({hi_text}..{lo_text})"
            return _size_range_check(lo, hi)
        return _not_a_size(whole_text)
    v = count(item)
    if v is None and _WELL_FORMED.fullmatch(item.strip()):
        return f"{item.strip()} is out of range: sizes run from 1 to 2^36"
    if v is None:
        return _not_a_size(whole_text)
    return _size_range_check(v, v)


def _not_a_size(text):
    return (f"'{text}' is not a size: give a whole number from 1 to 2^36 (268435456, 2^28, 1e6), a list, or a range "
            "like 2^10..2^30")


def _size_range_check(lo, hi):
    for v in (lo, hi):
        if not 1 <= v <= MAX_SIZE:
            return f"{v} is out of range: sizes run from 1 to 2^36"
    return None


def size(text):
    """An argparse type: one size n (268435456, 2^28, 1e6); the text is what the stages are given."""
    if "," in text or ".." in text:
        raise argparse.ArgumentTypeError(f"'{text}': one size here, not a list or a range")
    problem = _size_item(text, text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def size_list(text):
    """An argparse type: sizes, a list (1000,2^20) or ranges of powers of two (2^10..2^30)."""
    for item in text.split(","):
        problem = _size_item(item.strip(), text)
        if problem:
            raise argparse.ArgumentTypeError(problem)
    return text


def expand(text):
    """A size list that size_list() accepted -> the sizes, in order (a..b doubles from a to b)."""
    out = []
    for item in text.split(","):
        if ".." in item:
            lo, hi = (count(x) for x in item.split("..", 1))
            while lo <= hi:
                out.append(lo)
                lo *= 2
        else:
            out.append(count(item))
    return out


def gemm_dim(text):
    """An argparse type: a matrix size, 1 to 1000000 (the text is what the GEMM stage is given)."""
    v = count(text)
    if v is None and _NEGATIVE.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"{text.strip()} is out of range: matrix sizes run from 1 to {MAX_GEMM_DIM}")
    if v is None:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number: give one from 1 to {MAX_GEMM_DIM}")
    if not 1 <= v <= MAX_GEMM_DIM:
        raise argparse.ArgumentTypeError(f"{v} is out of range: matrix sizes run from 1 to {MAX_GEMM_DIM}")
    return text


def whole(lo, hi):
    """An argparse type: a whole number from lo to hi, refused in the stages' own words otherwise."""
    def parse(text):
        if _NEGATIVE.fullmatch(text.strip()):  # a negative number: a number, out of range (as the stages say)
            raise argparse.ArgumentTypeError(f"{text.strip()} is out of range: give a whole number from {lo} to {hi}")
        if not text.strip().isdigit():
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number: give one from {lo} to {hi}")
        if not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"{text.strip()} is out of range: give a whole number from {lo} to {hi}")
        return int(text)
    return parse


def repeat(text):
    """An argparse type: ctest's --repeat MODE:N."""
    if not re.fullmatch(r"(until-fail|until-pass|after-timeout):[1-9]\d*", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not until-fail:N, until-pass:N or after-timeout:N")
    return text


def _choice(choices):
    def check(text):
        if text not in choices:
            raise argparse.ArgumentTypeError(f"'{text}' is not one of {', '.join(choices)}")
    return check


def _block(text):
    v = count(text)
    if v is None or not _is_power_of_two(v) or not 64 <= v <= 1024:
        raise argparse.ArgumentTypeError(f"{text}: the stages run power-of-two blocks from 64 to 1024")


def try_options(stage):
    """The stage options ./ladder try can vary, each with its check (what the runner sets itself is not here)."""
    if stage == GEMM:
        return {"--tile": _choice(["16", "32"]), "--pad": _choice(["off", "on"])}
    options = {"--block": _block, "--offset": whole(0, 1024)}
    if has_stream(stage):
        options["--grid"] = whole(0, 2 ** 31 - 1)
    if len(combines(stage)) > 1:
        options["--combine"] = _choice(combines(stage))
    return options


def check_try_option(stage, option, values):
    checks = try_options(stage)
    if option not in checks:
        raise UsageProblem(f"try {stage} {option}=...: ./ladder try varies {', '.join(checks)} of {stage} "
                           "(or a constant of its file, NAME=v1,v2, or an experiment's patch)")
    for v in values:
        try:
            checks[option](v)
        except argparse.ArgumentTypeError as e:
            raise UsageProblem(f"try {stage} {option}={v}: {e}") from None


def check_try_constant(stage, name, values):
    """The values to build a copy for: all but the file's own (the stage as it is runs that one)."""
    found = constants(stage)
    if name not in found:
        option = next(iter(try_options(stage)))
        patches = sorted(p.name for p in (ROOT / "docs" / "experiments" / stage).glob("*.patch"))
        have = f"its constants: {', '.join(found)}" if found else \
            f"it has none: vary an option ({option}=...)" + \
            (f" or try one of its experiments ({', '.join(patches)})" if patches else "")
        raise UsageProblem(f"try {stage} {name}=...: {stage}/{stage_file(stage).name} has no constant {name} "
                           f"({have})")
    lo, hi = CONSTANT_RANGE
    for v in values:
        if not v.isdigit() or not lo <= int(v) <= hi:
            raise UsageProblem(f"try {stage} {name}={v}: {name} is a count (the file says {name} = {found[name]}): "
                               f"give whole numbers from {lo} to {hi}")
    own = found[name].strip()
    others = [v for v in values if not (own.isdigit() and int(v) == int(own))]
    if not others:
        raise UsageProblem(f"try {stage} {name}={','.join(values)}: the file says {name} = {own} already, so "
                           f"there is nothing to compare: give other values")
    return others
