"""What a command needs before it runs: the packages the build needs (installed with apt-get where ./ladder may, the
command printed first), the build itself (CMake), and the disassemblers the machine-code checks read with (pip)."""
import fcntl
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

from .stages import ROOT, say

BUILD_DEPS = ["cmake", "g++", "libcli11-dev", "libfmt-dev"]
HEADERS = {"libcli11-dev": "CLI/CLI.hpp", "libfmt-dev": "fmt/format.h", "libgtest-dev": "gtest/gtest.h"}
MIN_CMAKE = "3.24"

@functools.lru_cache(maxsize=None)  # each call starts cmake, a Python wrapper where pip installed it
def cmake_version():
    done = subprocess.run(["cmake", "--version"], capture_output=True, text=True) if shutil.which("cmake") else None
    return done.stdout.split()[2] if done and done.returncode == 0 else None

def have(package):
    """Whether what a Debian/Ubuntu package provides is here, however it was installed."""
    if package == "cmake":
        version = lambda text: tuple(int(x) for x in re.findall(r"\d+", text)[:3])  # noqa: E731
        return cmake_version() is not None and version(cmake_version()) >= version(MIN_CMAKE)
    if package in HEADERS:
        return any((pathlib.Path(d) / HEADERS[package]).is_file() for d in ("/usr/include", "/usr/local/include"))
    return shutil.which({"ninja-build": "ninja"}.get(package, package)) is not None

def ensure(required, optional=()):
    """apt-get installs what is missing where it may (as root or with password-less sudo, unless LADDER_NO_INSTALL=1);
    exit 2 naming the command that installs what is still missing."""
    missing = [p for p in [*required, *optional] if not have(p)]
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    may = os.environ.get("LADDER_NO_INSTALL") != "1" and shutil.which("apt-get") and (
        not sudo or shutil.which("sudo") and subprocess.run([*sudo, "true"], capture_output=True).returncode == 0)
    if missing and may:
        prefix = "sudo " if sudo else ""
        say(f"ladder: installing {' '.join(missing)} (LADDER_NO_INSTALL=1 installs nothing):\n"
            f"  {prefix}apt-get update; {prefix}apt-get install -y --no-install-recommends <each package>")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run([*sudo, "apt-get", "update"], capture_output=True, env=env, stdin=subprocess.DEVNULL)
        for p in missing:  # one at a time, so an optional one that is not available cannot block the others
            done = subprocess.run([*sudo, "apt-get", "install", "-y", "--no-install-recommends", p], env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                say(f"ladder: apt-get could not install {p}; its last lines:\n" +
                    "\n".join("  " + l for l in (done.stdout + done.stderr).splitlines()[-15:]))
        cmake_version.cache_clear()  # apt may have installed it
    if old := "cmake" in required and not have("cmake") and cmake_version():
        say(f"ladder: CMake {old} is too old: {MIN_CMAKE} or newer is needed ('pip install cmake' gives one)")
    if still := [p for p in required if not have(p) and not (p == "cmake" and old)]:
        say(f"ladder: missing {' '.join(still)}; install with: sudo apt-get install {' '.join(still)}")
    if old or still:
        sys.exit(2)

def ncpu():
    return os.cpu_count() or 2

def gpu_visible():
    if os.environ.get("CUDA_VISIBLE_DEVICES", "unset") in ("", "-1", "none", "NoDevFiles"):
        return False
    if shutil.which("nvidia-smi"):
        return "GPU " in subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return any(pathlib.Path("/dev").glob("nvidia[0-9]*"))

def build(build_dir, targets=(), optional=("ninja-build",)):
    """Installs what the build needs, configures build_dir where it is new (or CUDAARCHS or LADDER_CMAKE_ARGS ask for
    it) and builds it, the targets given too; the compiler's output goes to stderr."""
    ensure(BUILD_DEPS, optional)
    if not shutil.which("nvcc") and pathlib.Path("/usr/local/cuda/bin/nvcc").exists():  # its usual home
        os.environ["PATH"] = f"/usr/local/cuda/bin:{os.environ['PATH']}"
    if not shutil.which("nvcc"):
        say("ladder: nvcc not found: install the CUDA Toolkit (13.0 or newer) and put its bin/ on PATH")
        sys.exit(2)
    build_dir.mkdir(parents=True, exist_ok=True)  # two ./ladder commands at once would configure and link it together:
    fcntl.flock(lock := open(build_dir / ".lock", "w"), fcntl.LOCK_EX)  # one at a time: held while `lock` lives
    first, started = not (build_dir / "CMakeCache.txt").exists(), time.time()
    archs = [f"-DCMAKE_CUDA_ARCHITECTURES={os.environ['CUDAARCHS']}"] if os.environ.get("CUDAARCHS") else []
    extra = os.environ.get("LADDER_CMAKE_ARGS", "").split()
    if first or archs or extra:
        if first:
            say(f"ladder: configuring {build_dir} (the first build compiles every stage and CUB: allow minutes)")
        generator = ["-G", "Ninja"] if first and shutil.which("ninja") else []
        done = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
                               "-DCMAKE_BUILD_TYPE=Release", *archs, *extra], capture_output=True, text=True)
        if done.returncode != 0:
            say(done.stdout + done.stderr + f"ladder: CMake could not configure {build_dir}")
            sys.exit(2)
        for line in done.stdout.splitlines():
            if line.startswith("-- cuda-ladder: "):
                say("ladder: " + line.removeprefix("-- cuda-ladder: "))
    command = ["cmake", "--build", str(build_dir), "--parallel", str(ncpu())]
    for group in ([], list(targets)) if targets else ([],):
        if subprocess.run([*command, *(["--target", *group] if group else [])], stdout=sys.stderr).returncode != 0:
            say("ladder: the build failed (the compiler's messages are above)")
            sys.exit(2)
    if first:  # how long a first build takes, for the README
        (build_dir / "first_build.json").write_text(json.dumps(
            {"seconds": round(time.time() - started), "cpus": ncpu(), "gpu": "yes" if gpu_visible() else "none",
             "date": time.strftime("%Y-%m-%d"), "command": "./ladder build in a fresh clone"}) + "\n")

def disassemblers(build_dir):
    """nvdisasm, with which the machine-code checks read the stages' code: the CUDA Toolkit's, else the one PyPI ships
    for this nvcc's major version, put in <build>/tools with pip --target (nothing outside the build directory
    changes). Without it (LADDER_NO_INSTALL=1, no pip) those tests report skipped, saying how to install it."""
    tools, nvcc = pathlib.Path(build_dir) / "tools", shutil.which("nvcc") or ""
    if (shutil.which("nvdisasm") or (nvcc and (pathlib.Path(nvcc).parent / "nvdisasm").exists())
            or list(tools.glob("nvidia/*/bin/nvdisasm")) or os.environ.get("LADDER_NO_INSTALL") == "1"):
        return
    major = re.search(r"release (\d+)\.", subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout)
    packages = [f"{p}=={major[1] if major else 13}.*" for p in ("nvidia-cuda-nvdisasm", "nvidia-cuda-cuobjdump")]
    say(f"ladder: installing {', '.join(packages)} for the machine-code checks (LADDER_NO_INSTALL=1 installs "
        f"nothing):\n  python3 -m pip install --target {tools} {' '.join(packages)}")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                           "--quiet", "--upgrade", "--target", str(tools), *packages], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        say("ladder: pip could not install them (the machine-code tests will report skipped); its last lines:\n" +
            "\n".join("  " + l for l in (done.stdout + done.stderr).splitlines()[-15:]))
