# Project-wide compiler settings, and the helpers that make a stage folder, or a copy of a stage file, a program.

# Warnings, for host code (g++) and for device code (nvcc and the host compiler it drives).
add_library(ladder_warnings INTERFACE)
target_compile_options(ladder_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Wno-deprecated-gpu-targets>)
if(LADDER_WERROR)
  target_compile_options(ladder_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()

# Device code: a Debug build is debuggable on the GPU (-G, for cuda-gdb: slow kernels); every other build keeps line
# information (-lineinfo), so Nsight Compute and compute-sanitizer name source lines. Never both: -G overrides it.
add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:$<IF:$<CONFIG:Debug>,-G,-lineinfo>>")

# ladder_add_stage(<source>): the program, named after the folder that calls this; tests/CMakeLists.txt adds its tests.
function(ladder_add_stage source)
  get_filename_component(name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE ladder::harness ladder_warnings)
  set_property(GLOBAL APPEND PROPERTY LADDER_STAGES ${name})
endfunction()

# ladder_add_copies(<dir> [<options>...]): a program for every <dir>/<name>/ that holds a copy of a stage file and a
# note.txt (what the copy is: ./ladder try and the planted-bug suite write them), built only when asked for, into
# <dir>/bin, with the compile options given. Its --version names the copy and says what it is a copy of
# (common/options.cpp asks for these two functions).
function(ladder_add_copies dir)
  file(GLOB notes CONFIGURE_DEPENDS ${dir}/*/note.txt)
  foreach(note_file ${notes})
    get_filename_component(folder ${note_file} DIRECTORY)
    get_filename_component(name ${folder} NAME)
    file(GLOB source ${folder}/*.cu ${folder}/*.cpp)
    file(READ ${note_file} note)
    string(STRIP "${note}" note)
    file(CONFIGURE OUTPUT ${folder}/names/names.cpp @ONLY CONTENT [[
extern "C" const char* ladder_program_name() { return "@name@"; }
extern "C" const char* ladder_program_note() { return "@note@"; }
]])
    add_executable(${name} EXCLUDE_FROM_ALL ${source} ${folder}/names/names.cpp)
    target_link_libraries(${name} PRIVATE ladder::harness fmt::fmt Threads::Threads)
    target_compile_options(${name} PRIVATE ${ARGN})
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${dir}/bin)
  endforeach()
endfunction()
