# Run after a stage (or cpu_baseline) is linked: keeps what `EXE --describe` says in OUT, so that ./ladder, the docs
# and the tests read the program's own description of itself (cli.hpp) without running it again.
execute_process(COMMAND ${EXE} --describe OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --describe failed (exit ${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
