# ./ladder: per-command help, errors in the project's words, values refused before anything runs.

# The driver: per-command help, and every value it can check without a build refused in one line before anything is
# installed or built (each test gives it a build directory of its own and fails if that directory then exists).
function(ladder_driver_expect name)
  cmake_parse_arguments(E "" "EXIT;OUTPUT;REJECT;ENV" "ARGS" ${ARGN})
  string(REPLACE ";" " " args "${E_ARGS}")
  set(never_built ${CMAKE_BINARY_DIR}/driver-tests/${name})
  add_test(NAME driver.${name}
    COMMAND ${CMAKE_COMMAND} -DEXE=${PROJECT_SOURCE_DIR}/ladder "-DARGS=${args}" -DEXPECT_EXIT=${E_EXIT}
            "-DEXPECT_OUTPUT=${E_OUTPUT}" "-DREJECT_OUTPUT=${E_REJECT}" -DABSENT=${never_built}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
  set_tests_properties(driver.${name} PROPERTIES LABELS cpu
                       ENVIRONMENT "LADDER_NO_INSTALL=1;BUILD_DIR=${never_built};${E_ENV}")
endfunction()
ladder_driver_expect(unknown_command EXIT 2 OUTPUT "^ladder: error: unknown command 'fly'" ARGS fly)
# A study that measures nothing without a GPU stops before it builds anything (the build directory stays absent).
ladder_driver_expect(mutants_no_gpu EXIT 77 OUTPUT "^ladder: mutants needs an NVIDIA GPU, and none is visible"
                     ARGS mutants ENV "CUDA_VISIBLE_DEVICES=-1")
ladder_driver_expect(no_command EXIT 2 OUTPUT "^usage: ./ladder .*COMMAND.*ladder: error: give a command" ARGS)
ladder_driver_expect(run_bad_option EXIT 2 OUTPUT "^ladder: error: unrecognized arguments: --nonsense \\(see ./ladder run --help\\)" ARGS run --nonsense)
ladder_driver_expect(test_bad_option EXIT 2 OUTPUT "^ladder: error: unrecognized arguments: --bogus \\(see ./ladder test --help\\)" ARGS test --bogus)
ladder_driver_expect(test_bad_jobs EXIT 2 OUTPUT "^ladder: error: argument -j/--parallel: 'x' is not a whole number" ARGS test -j x)
ladder_driver_expect(build_bad_option EXIT 2 OUTPUT "^ladder: error: unrecognized arguments: --x \\(see ./ladder build --help\\)" ARGS build --x)
ladder_driver_expect(build_needs_dir EXIT 2 OUTPUT "^ladder: error: --build needs a directory" ARGS test --build)
ladder_driver_expect(version EXIT 0 OUTPUT "^cuda-ladder [0-9]+\\.[0-9]+ \\(commit " ARGS --version)
ladder_driver_expect(diff EXIT 0 OUTPUT "^--- 04_warp_unroll/reduce.cu" ARGS diff 04 05)
ladder_driver_expect(diff_no_stage EXIT 2 OUTPUT "^ladder: error: no stage 'nope': the stages are 01_naive, " ARGS diff 01 nope)
ladder_driver_expect(diff_other_kind EXIT 2 OUTPUT "^ladder: error: diff 07 08: 07_multiblock/reduce.cu and 08_gemm_tiled/gemm.cu are stages of two kinds" ARGS diff 07 08)
ladder_driver_expect(diff_same EXIT 2 OUTPUT "^ladder: error: diff 01 01: a stage against itself shows nothing" ARGS diff 01 01)
# Any two stages of one kind, in either order.
ladder_driver_expect(diff_backwards EXIT 0 OUTPUT "^--- 05_shuffle/reduce.cu\n\\+\\+\\+ 04_warp_unroll/reduce.cu" ARGS diff 05 04)
ladder_driver_expect(diff_not_adjacent EXIT 0 OUTPUT "^--- 01_naive/reduce.cu\n\\+\\+\\+ 03_padding/reduce.cu" ARGS diff 01 03)
ladder_driver_expect(build_unmakeable EXIT 2 OUTPUT "^ladder: error: --build /proc/ladder-nope: the directory cannot be made in /proc" REJECT "configuring" ARGS run --build /proc/ladder-nope)
ladder_driver_expect(save_unmakeable EXIT 2 OUTPUT "^ladder: error: --save /proc/ladder-nope: the directory cannot be made in /proc" REJECT "configuring" ARGS run --save /proc/ladder-nope)
ladder_driver_expect(save_is_file EXIT 2 OUTPUT "^ladder: error: --save .*/CMakeLists.txt: that is a file, not a directory" ARGS run --save ${PROJECT_SOURCE_DIR}/CMakeLists.txt)
# A relative --save is relative to where ./ladder is called from (here the test's directory, which has this file).
ladder_driver_expect(save_relative EXIT 2 OUTPUT "^ladder: error: --save .*/tests/CTestTestfile.cmake: that is a file" ARGS run --save CTestTestfile.cmake)
ladder_driver_expect(help_command EXIT 0 OUTPUT "^usage: ./ladder run .*examples:" ARGS help run)
ladder_driver_expect(help_docs EXIT 0 OUTPUT "^usage: ./ladder docs .*render docs/.*examples:" REJECT "scripts/make_docs.py" ARGS help docs)
ladder_driver_expect(docs_help EXIT 0 OUTPUT "^usage: ./ladder docs .*--check" REJECT "python3 scripts/make_docs.py" ARGS docs --help)
ladder_driver_expect(docs_bad_option EXIT 2 OUTPUT "^ladder: error: unrecognized arguments: --nonsense \\(see ./ladder docs --help\\)" REJECT "usage:" ARGS docs --nonsense)
ladder_driver_expect(try_own_value EXIT 2 OUTPUT "^ladder: error: try 06_float4 kLoadsInFlight=4: the file says kLoadsInFlight = 4 already" ARGS try 06 kLoadsInFlight=4,4)
# Help: the commands, the environment; each command's own syntax and options.
ladder_driver_expect(help EXIT 0 OUTPUT "commands:.*run .*test .*try .*LADDER_NO_INSTALL=1" REJECT "skipped  |called by" ARGS --help)
ladder_driver_expect(run_help EXIT 0 OUTPUT "^usage: ./ladder run .*--reps N +timed repetitions.*--gemm-size M +M = N = K"
                     REJECT "--sweep|--ncu-check|skipped" ARGS run --help)
ladder_driver_expect(try_help EXIT 0 OUTPUT "^usage: ./ladder try \\[options\\] STAGE CHANGE.*NAME=v1,v2.*experiment.patch" ARGS try --help)
ladder_driver_expect(diff_help EXIT 0 OUTPUT "^usage: ./ladder diff \\[-h\\] A B" ARGS diff --help)
ladder_driver_expect(test_help EXIT 0 OUTPUT "^usage: ./ladder test .*-R REGEX.*-LE LABEL" ARGS test --help)
ladder_driver_expect(build_help EXIT 0 OUTPUT "^usage: ./ladder build \\[-h\\] \\[--build DIR\\]" ARGS build --help)
ladder_driver_expect(measure_help EXIT 0 OUTPUT "^usage: ./ladder measure .*--profile-size N.*--sweep SIZES" ARGS measure --help)
# Values of ./ladder's own, and of the stage programs', refused in one line before any stage runs: the stage options
# by a program that takes them, after the build (these run the Python side against this build's programs).
function(ladder_runner_expect name command)
  cmake_parse_arguments(E "" "EXIT;OUTPUT" "ARGS" ${ARGN})
  string(REPLACE ";" " " args "${command} --build ${CMAKE_BINARY_DIR} ${E_ARGS}")
  add_test(NAME driver.${name}
    COMMAND ${CMAKE_COMMAND} -DEXE=${Python3_EXECUTABLE} "-DARGS=-m scripts.ladder ${args}" -DEXPECT_EXIT=${E_EXIT}
            "-DEXPECT_OUTPUT=${E_OUTPUT}" -DREJECT_OUTPUT=^\\[1/ -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(driver.${name} PROPERTIES LABELS cpu)
endfunction()
ladder_runner_expect(run_zero_size run EXIT 2 OUTPUT "^ladder: error: -n/--size 0 is out of range: sizes run from 1 to 2\\^36" ARGS -n 0)
ladder_runner_expect(run_text_size run EXIT 2 OUTPUT "^ladder: error: -n/--size 'abc' is not a size" ARGS -n abc)
ladder_runner_expect(run_zero_gemm run EXIT 2 OUTPUT "^ladder: error: --gemm-size: --size 0 is out of range: matrix sizes run from 1 to 1000000" ARGS --gemm-size 0)
ladder_runner_expect(run_text_gemm run EXIT 2 OUTPUT "^ladder: error: --gemm-size: --size 'abc' is not a whole number" ARGS --gemm-size abc)
ladder_runner_expect(run_zero_reps run EXIT 2 OUTPUT "^ladder: error: --reps 0 is out of range" ARGS --reps 0)
ladder_runner_expect(sweep_text sweep EXIT 2 OUTPUT "^ladder: error: --sweep: -n/--size 'foo' is not a size" ARGS --sweep foo)
ladder_runner_expect(sweep_reversed sweep EXIT 2 OUTPUT "^ladder: error: --sweep: -n/--size '2\\^10..2\\^5' runs backwards" ARGS --sweep 2^10..2^5)
ladder_runner_expect(try_option_value try EXIT 2 OUTPUT "^ladder: error: try 02_grid_stride --grid=abc: --grid 'abc' is not a whole number" ARGS 02 --grid=abc)
ladder_runner_expect(try_option_unknown try EXIT 2 OUTPUT "^ladder: error: try 01_naive --grid=...: ./ladder try varies --block, --offset of 01_naive" ARGS 01 --grid=64)
ladder_driver_expect(probe_regime EXIT 2 OUTPUT "^ladder: error: argument --regime: invalid choice: 'fast'" ARGS probe --regime fast)
ladder_driver_expect(try_no_stage EXIT 2 OUTPUT "^ladder: error: no stage '99'" ARGS try 99 kBlock=1)
ladder_driver_expect(try_bad_spec EXIT 2 OUTPUT "^ladder: error: try 06_float4 kLoads: not NAME=v1,v2" ARGS try 06 kLoads)
ladder_driver_expect(try_constant_zero EXIT 2
                     OUTPUT "^ladder: error: try 06_float4 kLoadsInFlight=0: kLoadsInFlight is a count .*from 1 to 64" ARGS try 06 kLoadsInFlight=0)
ladder_driver_expect(try_constant_text EXIT 2 OUTPUT "^ladder: error: try 06_float4 kLoadsInFlight=abc: " ARGS try 06 kLoadsInFlight=abc)
ladder_driver_expect(try_no_constant EXIT 2 OUTPUT "^ladder: error: try 06_float4 kNope=...: 06_float4/reduce.cu has no constant kNope \\(its constants: kLoadsInFlight\\)"
                     ARGS try 06 kNope=1)
ladder_driver_expect(try_option_space EXIT 2 OUTPUT "^ladder: error: try 02 --grid: write a stage option to vary as --grid=64,128" ARGS try 02 --grid 64,128)
ladder_driver_expect(try_patch_other_stage EXIT 2
                     OUTPUT "^ladder: error: try 05_shuffle docs/experiments/01_naive/interleaved.patch: the patch changes 01_naive/reduce.cu, not 05_shuffle/reduce.cu: it is an experiment of 01_naive \\(./ladder try 01 "
                     ARGS try 05 docs/experiments/01_naive/interleaved.patch)
ladder_driver_expect(try_patch_stale EXIT 2
                     OUTPUT "^ladder: error: try 01_naive .*stale.patch does not apply to 01_naive/reduce.cu as it is now; git apply says: patch failed: 01_naive/reduce.cu:"
                     ARGS try 01 ${CMAKE_CURRENT_SOURCE_DIR}/data/stale.patch)
ladder_driver_expect(try_patch_missing EXIT 2 OUTPUT "^ladder: error: 'nothing.patch': no such patch" ARGS try 01 nothing.patch)
if(NOT LADDER_NCU)
  ladder_driver_expect(profile_no_ncu EXIT 2 OUTPUT "^ladder: error: profile needs ncu \\(Nsight Compute\\)" ARGS profile)
endif()
# An old CMake is named as too old, not as missing (a cmake on PATH that says it is 3.22.1).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/old-cmake/cmake "#!/bin/sh\necho 'cmake version 3.22.1'\n")
file(CHMOD ${CMAKE_CURRENT_BINARY_DIR}/old-cmake/cmake PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
ladder_driver_expect(old_cmake EXIT 2 OUTPUT "^ladder: CMake 3.22.1 is too old: 3.24 or newer is needed" REJECT "missing"
                     ARGS build ENV "PATH=${CMAKE_CURRENT_BINARY_DIR}/old-cmake:$ENV{PATH}")
