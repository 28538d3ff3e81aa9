"""The orderings and scopes the kernels' comments promise, read from their machine code on the CPU.

Some bugs never show on one GPU: a last-block ticket taken with memory_order_relaxed, partial sums read through the
non-coherent path (__ldg), an atomic of block scope in a kernel of many blocks. This compiles each file with the
flags the build compiles the stages with, disassembles it with nvdisasm and demands, of every kernel, in code order:
  a. no global atomic (ATOM, ATOMG, RED, REDG) is of block scope (.CTA or .SM: atomicAdd_block);
  b. an atomic whose result is used and that is no compare-and-swap (a ticket) is a release where global stores come
     before it (a MEMBAR .GPU or .SYS after the last) and an acquire where global loads follow (a CCTL.IVALL first);
  c. no non-coherent load (LDG/LD .CONSTANT) comes after the kernel's first global store or atomic.
A PASS proves these instructions are in this machine code in this order, not that the kernel is right: the order is
the code's, not every path's (a loop's back edge is not followed), addresses are not known, and only --arch is checked.

Exit status: 0 pass, 1 a rule broken, 2 a file that does not compile or has no kernel, 77 nvcc or nvdisasm not
found."""
import argparse
import json
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from typing import NamedTuple

from .stages import ROOT, build_dir, ladder_stages, shown, stage_file

ATOMICS = {"ATOM", "ATOMG", "RED", "REDG"}  # global (or generic) memory; ATOMS is shared memory
STORES, LOADS, WIDE = {"ST", "STG"}, {"LD", "LDG"}, {"GPU", "SYS"}
INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*(.*?)\s*;")
LINE = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')

class Instr(NamedTuple):
    addr: str
    opcode: str      # with its modifiers: ATOM.E.ADD.STRONG.GPU
    operands: str
    where: str       # file:line of the kernel source
    op: str          # the opcode alone: ATOM
    mods: frozenset  # its modifiers: E, ADD, STRONG, GPU

    def __str__(self):
        return f"{self.opcode} (/*{self.addr}*/)"

class Skip(Exception):
    """A tool is missing: the test cannot run here."""

def find_tools(build):
    """nvcc, and nvdisasm: on PATH, beside nvcc, in /usr/local/cuda/bin, or where ./ladder put it (<build>/tools)."""
    if not (nvcc := shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")):
        raise Skip("nvcc not found: install the CUDA Toolkit and put its bin/ on PATH")
    found = [shutil.which("nvdisasm"), shutil.which(str(pathlib.Path(nvcc).parent / "nvdisasm")),
             *map(str, sorted((pathlib.Path(build) / "tools").glob("nvidia/*/bin/nvdisasm")))]
    if not (nvdisasm := next((p for p in found if p), None)):
        major = re.search(r"release (\d+)\.", subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout)
        raise Skip(f"nvdisasm not found (on PATH, beside nvcc or in {build}/tools): ./ladder test installs it there "
                   f"from PyPI, or: python3 -m pip install --target {build}/tools "
                   f"'nvidia-cuda-nvdisasm=={major[1] if major else 13}.*'")
    return nvcc, nvdisasm

ARCH = "sm_90"  # what the machine-code rules compile for unless --arch says otherwise

def compile_cubin(src, arch, tools, build, tmp):
    """src compiled with the flags the build compiles a stage with (its compile_commands.json, which CMake writes):
    includes, definitions, optimisation, standard and line information."""
    try:
        entries = json.loads((pathlib.Path(build) / "compile_commands.json").read_text())
    except OSError:
        raise RuntimeError(f"{build}/compile_commands.json does not exist: build first (./ladder build)") from None
    stages = {str(stage_file(s)) for s in ladder_stages()}
    words = shlex.split(next(e["command"] for e in entries if e["file"] in stages))
    keep = [w for i, w in enumerate(words) if re.match(r"-(I|D|O|std=|lineinfo$|G$)", w) or words[i - 1] == "-isystem"]
    flags = [x for w in keep for x in (["-isystem", w] if not w.startswith("-") else [w])]
    cubin = pathlib.Path(tmp) / "k.cubin"
    cc = subprocess.run([tools[0], f"-arch={arch}", "-cubin", *flags, "-o", str(cubin), str(src)],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        raise RuntimeError(f"{shown(src)} does not compile for {arch}:\n{cc.stderr.strip()}")
    return cubin

def kernels(listing):
    """{mangled name: [Instr, ...]} in code order. A //## File line group ends with the outermost location (the
    kernel's own line that an inlined call came from), so the last one seen names the instruction's line."""
    out, code, where = {}, None, "?"
    for line in listing.splitlines():
        if m := re.match(r"^\.text\.(\S+):$", line):
            code, where = out.setdefault(m.group(1), []), "?"
        elif m := LINE.match(line):
            where = f"{shown(m.group(1))}:{m.group(2)}"
        elif (m := INSTR.match(line)) and code is not None:
            op, *mods = m.group(2).split(".")
            code.append(Instr(m.group(1), m.group(2), m.group(3), where, op, frozenset(mods)))
    return out

def problems(code):
    """(instruction, what is wrong) for every rule this kernel's code breaks."""
    out, written = [], None
    for i, ins in enumerate(code):
        if ins.op in ATOMICS:
            if scope := next((s for s in ("CTA", "SM") if s in ins.mods), None):
                out.append((ins, f"{ins} is a block-scope (.{scope}) atomic: atomic only among one block's threads, "
                                 f"while other blocks use the same address (atomicAdd_block?); a kernel of many blocks "
                                 f"needs .GPU or .SYS"))
            # the register it returns into, after any predicate operands (RZ: the result is dropped)
            into = next((r for r in ins.operands.split(", ") if not re.fullmatch(r"!?U?P(T|\d+)", r)), "RZ")
            if ins.op in ("ATOM", "ATOMG") and into != "RZ" and not ins.mods & {"CAS", "CAST"}:
                out += ticket_problems(code, i)
        if ins.op in LOADS and "CONSTANT" in ins.mods and written:
            out.append((ins, f"{ins} reads through the non-coherent path (__ldg or a const __restrict__ load) after "
                             f"the kernel's first global write ({written.opcode}, line {written.where.split(':')[-1]}"
                             f"): what this launch writes may be read stale (read it with __ldcg or a plain load)"))
        if (ins.op in STORES or ins.op in ATOMICS) and not written:
            written = ins
    return out

def ticket_problems(code, i):
    """An atomic whose result is used takes a ticket: a release after the block's global stores before it, an acquire
    before its global loads after it (none is needed where there are no such stores or loads)."""
    out, ins = [], code[i]
    stores = [j for j in range(i) if code[j].op in STORES]
    start = max((j + 1 for j in range(i) if code[j].op in STORES or code[j].op in ATOMICS), default=0)
    if stores and not any(c.op == "MEMBAR" and c.mods & WIDE for c in code[start:i]):
        out.append((ins, f"{ins} takes a ticket with no MEMBAR.*.GPU before it (release missing): the block's "
                         f"writes before it need not be visible to the block that draws the last ticket"))
    later = code[i + 1:]
    end = next((j for j, c in enumerate(later) if c.op in LOADS), None)
    if end is not None and not any(c.op == "CCTL" and "IVALL" in c.mods for c in later[:end]):
        out.append((ins, f"{ins} takes a ticket with no CCTL.IVALL after it (acquire missing): the reads after it "
                         f"may see stale data of the other blocks"))
    return out

def readable(names, sources):
    """Demangled kernel names (c++filt, where there is one), enum arguments named: reduce_kernel<Combine::kAtomic>."""
    if filt := shutil.which("c++filt"):
        plain = subprocess.run([filt, "-p"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
        names = plain[:len(names)] if len(plain) >= len(names) else names
    enums = {}
    for text in sources:
        for m in re.finditer(r"enum\s+class\s+(\w+)[^{;]*\{(.*?)\}", text, re.S):
            items = [x.strip() for x in re.sub(r"//[^\n]*", "", m.group(2)).split(",") if x.strip()]
            if all(re.fullmatch(r"\w+", x) for x in items):
                enums[m.group(1)] = items

    def enum(m):
        items = enums.get(m.group(1), [])
        return f"{m.group(1)}::{items[int(m.group(2))]}" if int(m.group(2)) < len(items) else m.group(0)
    return [re.sub(r"\((?:\w+::)*(\w+)\)(\d+)", enum, n.removeprefix("void ").strip()) for n in names]

def check(src, arch, tools, build):
    """The lines that name each problem of every kernel of src, and how many kernels it has."""
    with tempfile.TemporaryDirectory() as tmp:
        dis = subprocess.run([tools[1], "--print-code", "--print-line-info-inline",
                              str(compile_cubin(src, arch, tools, build, tmp))], capture_output=True, text=True)
    if dis.returncode != 0:
        raise RuntimeError(f"nvdisasm failed on {shown(src)}:\n{dis.stderr.strip()}")
    code, text = kernels(dis.stdout), pathlib.Path(src).read_text()
    if not code:
        raise RuntimeError(f"{shown(src)}: no kernel in its machine code")
    names = readable(list(code), [text] + [p.read_text() for p in sorted((ROOT / "common").glob("*.hpp"))])
    return [f"{ins.where}: {name}: {what}" for name, instrs in zip(names, code.values())
            for ins, what in problems(instrs)], len(code)

def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sources", nargs="*", type=lambda s: pathlib.Path(s).resolve(), help="the .cu files (default: every stage's)")
    p.add_argument("--arch", default=ARCH, help=f"the GPU to compile for (default: {ARCH}, the H200's)")
    p.add_argument("--build", type=pathlib.Path, default=build_dir(), help="the build directory (default: build)")
    a = p.parse_args(argv)
    try:
        tools = find_tools(a.build)
        failed, sources = 0, a.sources or [stage_file(s) for s in ladder_stages()]
        for src in sources:
            lines, count = check(src, a.arch, tools, a.build)
            print("\n".join(lines + [f"sass: {shown(src)} ({a.arch}, kernels: {count}): "
                                     f"{len(lines) or 'no'} problem{'s' * (len(lines) != 1)}"]))
            failed += bool(lines)
        return 1 if failed else 0
    except Skip as e:
        print(f"SKIPPED: {e}")
        return 77
    except RuntimeError as e:
        print(f"sass: error: {e}", file=sys.stderr)
        return 2

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
