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

# ladder_json_strings(<out> <string>...): the strings as a JSON array (for the files the build writes for the runner).
function(ladder_json_strings out)
  list(TRANSFORM ARGN REPLACE "([\\\"])" "\\\\\\1")
  list(TRANSFORM ARGN PREPEND "\"")
  list(TRANSFORM ARGN APPEND "\"")
  string(JOIN ", " joined ${ARGN})
  set(${out} "[${joined}]" PARENT_SCOPE)
endfunction()

# Device code: a Debug build is debuggable on the GPU (-G, for cuda-gdb: slow kernels); every other build keeps
# line information (-lineinfo), so Nsight Compute and compute-sanitizer can point at source lines. Never both:
# -G overrides -lineinfo, and nvcc warns about it for every file.
set(line_info -lineinfo)
add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:$<IF:$<CONFIG:Debug>,-G,${line_info}>>")
# The machine-code checks (scripts/sass.py) compile a stage file on its own as a Release build compiles it, whatever
# this build's own type and CMAKE_CUDA_FLAGS (the saved SASS they compare with is a Release build's): with these
# flags, CMake's own, which the build writes to <build>/sass_flags.json for them (nothing else types them).
separate_arguments(release_flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS_RELEASE}")
ladder_json_strings(sass_flags -std=c++${CMAKE_CUDA_STANDARD} ${release_flags} ${line_info}
                    -I${PROJECT_SOURCE_DIR}/common)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/sass_flags.json @ONLY CONTENT "@sass_flags@\n")

# How the GPU tests share the GPU. A test whose verdict rests on the NaN the harness leaves in every SM's shared
# memory (a stage's own checks, a planted bug they must catch) or on its timings runs alone on the GPU: another
# process's kernels, scheduled between the fill and the launch, would leave other values in shared memory. It takes
# every slot of the GPU. A test that needs neither (a compute-sanitizer run, which turns the fill off; ./ladder try,
# whose verdicts this test takes from the host run) takes one slot: up to eight of them run at once, never beside
# a test that runs alone. CTest hands out the slots as tests start (resource groups, from the spec file the build
# writes and names in CTEST_RESOURCE_SPEC_FILE, which a plain ctest run reads).
set(LADDER_GPU_SLOTS 8)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/gpu_slots.json @ONLY CONTENT
     "{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"gpu_slots\": [{\"id\": \"0\", \"slots\": @LADDER_GPU_SLOTS@}]}]}\n")
set(CTEST_RESOURCE_SPEC_FILE ${CMAKE_BINARY_DIR}/gpu_slots.json)
function(ladder_gpu_lock name how)
  if(how STREQUAL "ALONE")
    set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS "gpu_slots:${LADDER_GPU_SLOTS}")
  else()
    set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS "gpu_slots:1")
  endif()
endfunction()

# A test that needs a GPU: labelled "gpu", reported as skipped when the program exits 77 (no GPU), alone on it.
function(ladder_gpu_test name)
  add_test(NAME ${name} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  ladder_gpu_lock(${name} ALONE)
endfunction()

# A test that cannot run on this machine (a tool or library is missing): registered anyway, so that CTest
# reports it as skipped and `./ladder test` prints the reason, instead of the test silently not existing.
function(ladder_skipped_test name labels reason)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: ${reason}")
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()

set(LADDER_NO_SANITIZER "compute-sanitizer not found (it ships with the CUDA Toolkit, or configure with -DLADDER_COMPUTE_SANITIZER=/path/to/compute-sanitizer)")

# The compute-sanitizer tools every stage runs under, and what the stage is given there: the quick self-test, and
# --no-shared-poison (the NaN fill of every SM's shared memory, tens of millions of stores per checked launch, is the
# harness's, not the stage's, and racecheck and synccheck would trace every one of them; the runs without the
# sanitizer keep it). Declared here only: ./ladder try runs a reader's file under the same, read from
# <build>/sanitizers.json.
set(LADDER_SANITIZER_TOOLS memcheck racecheck synccheck initcheck)
set(LADDER_SANITIZER_ARGS --self-test quick --no-shared-poison)
if(LADDER_COMPUTE_SANITIZER)
  ladder_json_strings(program "${LADDER_COMPUTE_SANITIZER}")
  set(missing [])
else()
  set(program [])
  ladder_json_strings(missing "${LADDER_NO_SANITIZER}")
endif()
ladder_json_strings(tools ${LADDER_SANITIZER_TOOLS})
ladder_json_strings(args ${LADDER_SANITIZER_ARGS})
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/sanitizers.json @ONLY CONTENT
     "{\"program\": @program@, \"missing\": @missing@, \"tools\": @tools@, \"args\": @args@}\n")

# A GPU test run under compute-sanitizer --tool TOOL. Skipped without a GPU.
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
    LABELS "gpu;sanitizer" SKIP_REGULAR_EXPRESSION "no usable GPU" TIMEOUT 1200 COST 20)
  ladder_gpu_lock(${target}.${tool} SHARED)  # every sanitizer run here is given --no-shared-poison
endfunction()

# ladder_describe(<target>): after each link, <build>/describe/<target>.json holds what the program says of itself
# (--describe): its role, options, defaults and ranges, for everything that runs or documents it.
function(ladder_describe target)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> -DOUT=${CMAKE_BINARY_DIR}/describe/${target}.json
            -P ${PROJECT_SOURCE_DIR}/cmake/Describe.cmake
    VERBATIM)
endfunction()
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/describe)

# ladder_add_stage(<source>): the executable is named after the directory that calls this.
# Registers the stage's self-check over awkward sizes and its sanitizer runs.
function(ladder_add_stage source)
  get_filename_component(name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE ladder::harness ladder_warnings)
  ladder_describe(${name})
  set_property(GLOBAL APPEND PROPERTY LADDER_STAGES ${name})

  ladder_gpu_test(${name}.self_test COMMAND ${name} --self-test full)
  set_tests_properties(${name}.self_test PROPERTIES TIMEOUT 1200)
  foreach(tool ${LADDER_SANITIZER_TOOLS})
    ladder_sanitizer_test(${name} ${tool} ${LADDER_SANITIZER_ARGS})
  endforeach()
endfunction()

# ladder_name_copy(<target> <note>): a changed copy of a stage answers --version with its own name and what it is
# (common/options.cpp asks for these two functions, which a stage itself does not define).
function(ladder_name_copy target note)
  string(REPLACE "\\" "\\\\" note "${note}")
  string(REPLACE "\"" "\\\"" note "${note}")
  set(src ${CMAKE_CURRENT_BINARY_DIR}/names/${target}.cpp)
  file(CONFIGURE OUTPUT ${src} CONTENT [[// Generated by ladder_name_copy (cmake/Ladder.cmake).
extern "C" const char* ladder_program_name() { return "@target@"; }
extern "C" const char* ladder_program_note() { return "@note@"; }
]] @ONLY)
  target_sources(${target} PRIVATE ${src})
endfunction()

# ladder_add_variant(<target> <source> <note>): a copy of a stage changed by `./ladder try` (a constant, a patch),
# written under <build>/try/ and built only when asked for (no tests, not part of `all`).
function(ladder_add_variant target source note)
  add_executable(${target} EXCLUDE_FROM_ALL ${source})
  target_link_libraries(${target} PRIVATE ladder::harness ladder_warnings)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/try/bin)
  ladder_name_copy(${target} "${note}")
endfunction()
