# Planted bugs (scripts/mutants.py): copies of the real stage files, each with one realistic bug, made at build
# time. Each must be reported FAIL by its stage's default check, or flagged by racecheck. They are not part of a
# plain build (`all`), so a reader's first build stays short: the test fixture mutants.build builds them when the
# tests run, and only where their tests can run (a GPU is visible, compute-sanitizer for the racecheck ones). The
# target `mutants` builds them all.
add_custom_target(mutants)
set(LADDER_MUTANTS_SKIPPED "no usable GPU, so the planted-bug programs are not built or run (cmake --build ${CMAKE_BINARY_DIR} --target mutants builds them)")
# The copy of <stage>/<file> with planted bug <name>, made at build time (scripts/mutants.py make); sets ${out}.
function(ladder_plant name stage file)
  set(src ${PROJECT_SOURCE_DIR}/${stage}/${file})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name}/${file})
  add_custom_command(OUTPUT ${out}
    COMMAND ${Python3_EXECUTABLE} -m scripts.mutants make ${name} ${src} ${out}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DEPENDS ${src} ${PROJECT_SOURCE_DIR}/scripts/mutants.py
    COMMENT "Planting bug ${name} in a copy of ${stage}/${file}")
  set(out ${out} PARENT_SCOPE)
endfunction()

function(ladder_mutant name stage file expect args gpu says)
  ladder_plant(${name} ${stage} ${file})
  # A bug only the machine code shows (expect sass) is caught on the CPU: the copy, made in every build (a quick text
  # copy), is all its test needs, and no program is built.
  if(expect STREQUAL "sass")
    add_custom_target(mutant_${name} ALL DEPENDS ${out})
    add_dependencies(mutants mutant_${name})
    ladder_sass_test(mutant.${name} "cpu;mutant" --expect-violation ${out})
    return()
  endif()
  add_executable(mutant_${name} EXCLUDE_FROM_ALL ${out})
  target_link_libraries(mutant_${name} PRIVATE ladder::harness)
  ladder_name_copy(mutant_${name} "a copy of ${stage} with a planted bug (scripts/mutants.py: ${name})")
  # A planted bug may leave a variable unused (nvcc warning 177): expected here, so not reported.
  target_compile_options(mutant_${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-diag-suppress=177>)
  set_target_properties(mutant_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LADDER_TEST_BIN})
  add_dependencies(mutants mutant_${name})
  set(probe -DPROBE=${LADDER_GPU_PROBE} "-DMUTANTS_SKIPPED=${LADDER_MUTANTS_SKIPPED}")
  if(expect STREQUAL "racecheck")
    if(NOT LADDER_COMPUTE_SANITIZER)
      ladder_skipped_test(mutant.${name} "gpu;sanitizer;mutant" "${LADDER_NO_SANITIZER}")
      return()
    endif()
    add_test(NAME mutant.${name}
      COMMAND ${CMAKE_COMMAND} -DSANITIZER=${LADDER_COMPUTE_SANITIZER} -DTOOL=racecheck ${probe}
              -DEXE=$<TARGET_FILE:mutant_${name}> "-DARGS=${args} --no-shared-poison" -DEXPECT_ERRORS=1
              -P ${PROJECT_SOURCE_DIR}/tests/sanitize.cmake)
    set_tests_properties(mutant.${name} PROPERTIES LABELS "gpu;sanitizer;mutant" TIMEOUT 600)
  else()
    add_test(NAME mutant.${name}
      COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:mutant_${name}> "-DARGS=${args}" -DEXPECT_EXIT=1
              "-DEXPECT_OUTPUT=${says}" ${probe} -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
    set_tests_properties(mutant.${name} PROPERTIES LABELS "gpu;mutant" TIMEOUT 600)
  endif()
  set_tests_properties(mutant.${name} PROPERTIES FIXTURES_REQUIRED ladder_mutants
                       SKIP_REGULAR_EXPRESSION "SKIPPED: |no usable GPU")
  # racecheck's verdict rests on the tool, run with --no-shared-poison; the others' on the stage's own checks of
  # their own buffers, except where the bug reads shared memory it never wrote (gpu ALONE, scripts/mutants.py: fill)
  ladder_gpu_lock(mutant.${name} ${gpu})
  set_property(GLOBAL APPEND PROPERTY LADDER_MUTANTS_TESTED mutant_${name})
endfunction()

# The CPU baseline's planted bugs (scripts/mutants.py, CPU_MUTANTS): small host programs, built in every build; each
# must fail its check. Those run with --no-copy need no GPU; the copy's reports skipped without one.
function(ladder_cpu_mutant name stage file args)
  ladder_plant(${name} ${stage} ${file})
  add_executable(mutant_${name} ${out})
  target_link_libraries(mutant_${name} PRIVATE ladder::harness fmt::fmt Threads::Threads)
  set_target_properties(mutant_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LADDER_TEST_BIN})
  add_test(NAME mutant.${name}
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:mutant_${name}> "-DARGS=${args}" -DEXPECT_EXIT=1
            "-DEXPECT_OUTPUT=cpu_baseline: FAIL " -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
  if(args MATCHES "--no-copy")
    set_tests_properties(mutant.${name} PROPERTIES LABELS "cpu;mutant")
  else()
    set_tests_properties(mutant.${name} PROPERTIES LABELS "gpu;mutant" SKIP_REGULAR_EXPRESSION "no usable GPU")
    ladder_gpu_lock(mutant.${name} ALONE)
  endif()
endfunction()

if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -m scripts.mutants cmake ${CMAKE_CURRENT_BINARY_DIR}/mutants.cmake
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE mutants_rc)
  if(NOT mutants_rc EQUAL 0)
    message(FATAL_ERROR "scripts/mutants.py cmake failed (exit ${mutants_rc})")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/scripts/mutants.py)
  # Without a GPU the planted bugs that need one are not built, so a text no longer in its file would go unseen:
  # this checks every one of them on the CPU. Its planted bug: a copy of the table with one text changed.
  ladder_python_test(mutants.texts scripts.mutants check)
  ladder_python_test(mutants.texts_catch_stale scripts.mutants check-planted)
  include(${CMAKE_CURRENT_BINARY_DIR}/mutants.cmake)

  # The fixture: builds the planted bugs whose tests run, before them.
  get_property(tested GLOBAL PROPERTY LADDER_MUTANTS_TESTED)
  string(REPLACE ";" " " tested "${tested}")
  cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
  add_test(NAME mutants.build
    COMMAND ${CMAKE_COMMAND} -DPROBE=${LADDER_GPU_PROBE} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DCONFIG=$<CONFIG>
            -DJOBS=${jobs} "-DTARGETS=${tested}" "-DMUTANTS_SKIPPED=${LADDER_MUTANTS_SKIPPED}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/build_mutants.cmake)
  set_tests_properties(mutants.build PROPERTIES FIXTURES_SETUP ladder_mutants LABELS "gpu;mutant"
                       SKIP_REGULAR_EXPRESSION "SKIPPED: " TIMEOUT 1800 COST 100)
  # ...and, without a GPU, builds nothing and says so (run here with every GPU hidden, against a build directory
  # that must stay empty).
  add_test(NAME mutants.build_skips_without_gpu
    COMMAND ${CMAKE_COMMAND} -DPROBE=${LADDER_GPU_PROBE} -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/no-such-build
            -DJOBS=1 -DTARGETS=mutant_01_bound "-DMUTANTS_SKIPPED=${LADDER_MUTANTS_SKIPPED}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/build_mutants.cmake)
  set_tests_properties(mutants.build_skips_without_gpu PROPERTIES LABELS cpu ENVIRONMENT "CUDA_VISIBLE_DEVICES=-1"
                       PASS_REGULAR_EXPRESSION "^SKIPPED: no usable GPU, so the planted-bug programs are not built or run \\(cmake --build ")
  # A planted bug's --version names it, not the stage it copies.
  if(TARGET mutant_01_bound)
    add_test(NAME mutant.version
      COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:mutant_01_bound> -DARGS=--version -DEXPECT_EXIT=0
              "-DEXPECT_OUTPUT=^mutant_01_bound: cuda-ladder [0-9.]+ \\(commit [^)]*\\), a copy of 01_naive with a planted bug"
              -DPROBE=${LADDER_GPU_PROBE} "-DMUTANTS_SKIPPED=${LADDER_MUTANTS_SKIPPED}"
              -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
    set_tests_properties(mutant.version PROPERTIES LABELS "gpu;mutant" FIXTURES_REQUIRED ladder_mutants
                         SKIP_REGULAR_EXPRESSION "SKIPPED: ")
  endif()
endif()
