"""On a fresh Debug build directory (compute capability 7.5): the configure notes are said once, not on every later
configure; Debug device code is compiled with -G and without -lineinfo; a Release build keeps -lineinfo."""
import json
import pathlib
import subprocess
import sys
import tempfile

from maint.tests import ROOT, verdict

def configure(build, build_type):
    proc = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), f"-DCMAKE_BUILD_TYPE={build_type}",
                           "-DCMAKE_CUDA_ARCHITECTURES=75", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"configure: cmake failed:\n{proc.stdout}{proc.stderr}")
    return [line for line in proc.stdout.splitlines() if line.startswith("-- cuda-ladder:")]

def device_flags(build):
    commands = json.loads((build / "compile_commands.json").read_text())
    return [c["command"] for c in commands if c["file"].endswith(".cu")]

def main(argv):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        build = pathlib.Path(tmp) / "debug"
        configure(build, "Debug")
        if again := configure(build, "Debug"):
            problems.append("the second configure repeats its notes:\n  " + "\n  ".join(again))
        debug = device_flags(build)
        if not debug or not all(" -G " in c and "-lineinfo" not in c for c in debug):
            problems.append("a Debug build's device code is not compiled with -G alone:\n  " + (debug or ["none"])[0])
        configure(build, "Release")
        release = device_flags(build)
        if not all("-lineinfo" in c and " -G " not in c for c in release):
            problems.append("a Release build's device code is not compiled with -lineinfo:\n  " + release[0])
    return verdict("configure", problems, f"notes said once; Debug device code with -G ({len(debug)} files), "
                   "Release with -lineinfo")

if __name__ == "__main__":
    sys.exit(main(sys.argv))
