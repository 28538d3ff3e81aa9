# Runs EXE with ARGS and checks its exit status (EXPECT_EXIT), that its output matches EXPECT_OUTPUT and, if
# REJECT_OUTPUT is given, that it does not match that.
# A GPU test whose program finds no GPU (exit 77) prints "no usable GPU" and passes, which the test's
# SKIP_REGULAR_EXPRESSION reports as skipped.
separate_arguments(args NATIVE_COMMAND "${ARGS}")
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
message("${all}")
