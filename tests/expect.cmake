# Runs EXE with ARGS and checks its exit status (EXPECT_EXIT), that its output matches EXPECT_OUTPUT and, if
# REJECT_OUTPUT is given, that it does not match that; with ABSENT, that the path ABSENT does not exist afterwards
# (a command that must refuse its arguments before it builds anything).
# A GPU test whose program finds no GPU (exit 77) prints "no usable GPU" and passes, which the test's
# SKIP_REGULAR_EXPRESSION reports as skipped.
# A planted-bug program (PROBE given: a stage binary that says whether there is a GPU) is built by the test fixture
# mutants.build, only where a GPU is visible: without one the test reports skipped, saying how to build it (a copy
# left from an earlier build may be stale, so it is not run either).
separate_arguments(args NATIVE_COMMAND "${ARGS}")
if(PROBE)
  execute_process(COMMAND ${PROBE} --list-devices RESULT_VARIABLE probe OUTPUT_QUIET ERROR_QUIET)
  if(probe EQUAL 77)
    message("SKIPPED: ${MUTANTS_SKIPPED}")
    return()
  endif()
  if(NOT EXISTS "${EXE}")
    message(FATAL_ERROR "${EXE} is not built (the test mutants.build builds it; or cmake --build . --target mutants)")
  endif()
endif()
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 77 AND NOT EXPECT_EXIT EQUAL 77)
  message("no usable GPU: skipped\n${all}")
  return()
endif()
if(NOT rc EQUAL EXPECT_EXIT)
  message(FATAL_ERROR "expected exit status ${EXPECT_EXIT}, got ${rc}; output:\n${all}")
endif()
if(NOT all MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}':\n${all}")
endif()
if(REJECT_OUTPUT AND all MATCHES "${REJECT_OUTPUT}")
  message(FATAL_ERROR "output matches '${REJECT_OUTPUT}', which it must not:\n${all}")
endif()
if(ABSENT AND EXISTS "${ABSENT}")
  message(FATAL_ERROR "${ABSENT} exists: the command built (or configured) before it refused its arguments:\n${all}")
endif()
message("${all}")
