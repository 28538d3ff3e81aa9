# Dependencies come from installed packages; nothing is downloaded at build time.
# The notes about optional ones are said once per build directory, as CMake's own find modules say theirs
# (find_package_message repeats a message only when what it says changes).
include(FindPackageMessage)
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  message(FATAL_ERROR "CLI11 not found: install it with 'apt-get install libcli11-dev' (or point CLI11_DIR at its CMake config)")
endif()

find_package(fmt CONFIG QUIET)
if(NOT fmt_FOUND)
  message(FATAL_ERROR "fmt not found: install it with 'apt-get install libfmt-dev' (or point fmt_DIR at its CMake config)")
endif()

# Optional: the host unit tests of common/ need GoogleTest; everything else builds without it.
find_package(GTest CONFIG QUIET)
if(NOT GTest_FOUND)
  find_package(GTest QUIET)
endif()
if(NOT GTest_FOUND)
  find_package_message(LadderGTest
    "cuda-ladder: GoogleTest not found (apt-get install libgtest-dev): the host unit tests are registered as skipped"
    "none")
endif()

# Optional: the sanitizer tests need compute-sanitizer from the CUDA Toolkit.
find_program(LADDER_COMPUTE_SANITIZER compute-sanitizer
  HINTS "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/../compute-sanitizer")
if(NOT LADDER_COMPUTE_SANITIZER)
  find_package_message(LadderSanitizer
    "cuda-ladder: compute-sanitizer not found: the sanitizer tests are registered as skipped" "none")
endif()

# Optional: the profiler test needs Nsight Compute.
find_program(LADDER_NCU ncu HINTS "${CUDAToolkit_BIN_DIR}")

find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  find_package_message(LadderPython "cuda-ladder: python3 not found: the stage-diff and docs tests are left out" "none")
endif()
