# Project-wide compiler settings and the helper that turns a stage directory into an executable
# with its GPU tests.

# Warnings, for host code (g++) and for device code (nvcc and the host compiler it drives).
add_library(ladder_warnings INTERFACE)
target_compile_options(ladder_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Wno-deprecated-gpu-targets>)
if(LADDER_WERROR)
  target_compile_options(ladder_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()

# Line information in device code, so Nsight Compute and compute-sanitizer can point at source lines.
add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)

# A test that needs a GPU: labelled "gpu", reported as skipped when the program exits 77 (no GPU),
# and never run beside another GPU test, so timings and memory do not collide.
function(ladder_gpu_test name)
  add_test(NAME ${name} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu)
endfunction()

# A test that cannot run on this machine (a tool or library is missing): registered anyway, so that CTest
# reports it as skipped and `./ladder test` prints the reason, instead of the test silently not existing.
function(ladder_skipped_test name labels reason)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: ${reason}")
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()

set(LADDER_NO_SANITIZER "compute-sanitizer not found (it ships with the CUDA Toolkit; or configure with -DLADDER_COMPUTE_SANITIZER=/path/to/compute-sanitizer)")

# A GPU test run under compute-sanitizer (memcheck, racecheck, synccheck, initcheck). Skipped without a GPU.
function(ladder_sanitizer_test target tool)
  if(NOT LADDER_COMPUTE_SANITIZER)
    ladder_skipped_test(${target}.${tool} "gpu;sanitizer" "${LADDER_NO_SANITIZER}")
    return()
  endif()
  string(REPLACE ";" " " args "${ARGN}")
  add_test(NAME ${target}.${tool}
    COMMAND ${CMAKE_COMMAND}
      -DSANITIZER=${LADDER_COMPUTE_SANITIZER} -DTOOL=${tool} -DEXE=$<TARGET_FILE:${target}> "-DARGS=${args}"
      -P ${PROJECT_SOURCE_DIR}/tests/sanitize.cmake)
  set_tests_properties(${target}.${tool} PROPERTIES
    LABELS "gpu;sanitizer" SKIP_REGULAR_EXPRESSION "no usable GPU" RESOURCE_LOCK gpu TIMEOUT 1200)
endfunction()

# ladder_add_stage(<source>): the executable is named after the directory that calls this.
# Registers the stage's self-check over awkward sizes and its sanitizer runs.
function(ladder_add_stage source)
  get_filename_component(name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE ladder::harness ladder_warnings)
  set_property(GLOBAL APPEND PROPERTY LADDER_STAGES ${name})

  ladder_gpu_test(${name}.self_test COMMAND ${name} --self-test full)
  set_tests_properties(${name}.self_test PROPERTIES TIMEOUT 1200)
  foreach(tool memcheck racecheck synccheck initcheck)
    ladder_sanitizer_test(${name} ${tool} --self-test quick)
  endforeach()
endfunction()

# ladder_add_variant(<target> <source>): a copy of a stage with one constant changed, written by
# `./ladder try` under <build>/try/ and built only when asked for (no tests, not part of `all`).
function(ladder_add_variant target source)
  add_executable(${target} EXCLUDE_FROM_ALL ${source})
  target_link_libraries(${target} PRIVATE ladder::harness ladder_warnings)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/try/bin)
endfunction()
