# Runs EXE under compute-sanitizer --tool TOOL with ARGS and fails on any error it reports; with
# EXPECT_ERRORS=1 it fails unless the tool reports errors (a test that the tool sees a planted bug).
# Without a usable GPU it prints "no usable GPU", which the test's SKIP_REGULAR_EXPRESSION turns into
# a skip (cmake -P cannot exit 77 before CMake 3.29).
# A planted-bug program (PROBE given: a stage binary to ask for a GPU) may not be built: see expect.cmake.
separate_arguments(args NATIVE_COMMAND "${ARGS}")
if(NOT PROBE)
  set(PROBE ${EXE})
endif()
execute_process(COMMAND ${PROBE} --list-devices RESULT_VARIABLE probe OUTPUT_QUIET ERROR_QUIET)
if(probe EQUAL 77)
  if(MUTANTS_SKIPPED AND NOT EXISTS "${EXE}")
    message("SKIPPED: ${MUTANTS_SKIPPED}")
  else()
    message("no usable GPU: compute-sanitizer --tool ${TOOL} skipped")
  endif()
  return()
endif()
if(NOT EXISTS "${EXE}")
  message(FATAL_ERROR "${EXE} is not built (the test mutants.build builds it; or cmake --build . --target mutants)")
endif()
execute_process(
  COMMAND ${SANITIZER} --tool ${TOOL} --error-exitcode 99 --print-limit 20 ${EXE} ${args}
  RESULT_VARIABLE rc)
if(EXPECT_ERRORS)
  if(NOT rc EQUAL 99)
    message(FATAL_ERROR "compute-sanitizer --tool ${TOOL} reported no error (exit ${rc}), but one was expected")
  endif()
  message("compute-sanitizer --tool ${TOOL} reported the expected errors")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer --tool ${TOOL} failed (exit ${rc})")
endif()
