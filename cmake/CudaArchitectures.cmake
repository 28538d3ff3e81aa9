# Choose CMAKE_CUDA_ARCHITECTURES before project() enables CUDA.
#
#  - If you set it (-DCMAKE_CUDA_ARCHITECTURES=90, or the CUDAARCHS environment variable), that wins.
#  - Otherwise, if nvidia-smi sees a GPU, build for exactly that GPU ("native").
#  - Otherwise (a CI machine, a container without a driver) build the portable default below:
#    machine code for Turing (7.5), Ampere (8.x runs the 8.0 code) and Hopper (9.0), plus PTX for 9.0
#    that the driver compiles for anything newer. "native" cannot be used there: CMake stops with
#    "no GPU was detected".
set(LADDER_DEFAULT_CUDA_ARCHITECTURES "75-real;80-real;90")

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  execute_process(
    COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
    RESULT_VARIABLE _ladder_smi_rc
    OUTPUT_VARIABLE _ladder_smi_out
    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_ladder_smi_rc EQUAL 0 AND _ladder_smi_out MATCHES "^[0-9]+\\.[0-9]+")
    set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING "CUDA architectures to build for")
    message(STATUS "cuda-ladder: building for the GPU in this machine (compute capability ${_ladder_smi_out})")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${LADDER_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
        "CUDA architectures to build for")
    message(STATUS "cuda-ladder: no GPU seen, building the portable default ${LADDER_DEFAULT_CUDA_ARCHITECTURES}")
  endif()
endif()
