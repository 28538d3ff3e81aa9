# The test fixture mutants.build: builds the planted-bug programs whose tests will run (TARGETS, separated by
# spaces) in BUILD_DIR, when the tests run, so that a plain `cmake --build` stays short and `ctest` finds them built.
# Without a usable GPU (PROBE, a stage binary, exits 77) their tests cannot run: it builds nothing and prints
# "SKIPPED: ...", which its SKIP_REGULAR_EXPRESSION reports as skipped.
execute_process(COMMAND ${PROBE} --list-devices RESULT_VARIABLE probe OUTPUT_QUIET ERROR_QUIET)
if(probe EQUAL 77)
  message("SKIPPED: ${MUTANTS_SKIPPED}")
  return()
endif()
separate_arguments(targets UNIX_COMMAND "${TARGETS}")
set(config)
if(CONFIG)
  set(config --config ${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} ${config} --parallel ${JOBS} --target ${targets}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the planted-bug programs failed (exit ${rc}): cmake --build ${BUILD_DIR} --target ${TARGETS}")
endif()
message("built ${TARGETS}")
