# Checks of the source tree, the docs, the host runs and the machine code (Python, from the package `scripts`).
# COST: the seconds a test takes, about, on a 16-core machine: CTest starts the long ones first.

# ./ladder profile's sections and metrics exist on this GPU and its rows parse (one stage, one launch).
if(LADDER_NCU)
  add_test(NAME profile_metrics COMMAND ${Python3_EXECUTABLE} -m scripts.ladder profile
           --build ${CMAKE_BINARY_DIR} --ncu-check ${first_stage} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(profile_metrics PROPERTIES LABELS "gpu;profiler" SKIP_REGULAR_EXPRESSION "no usable GPU"
                       TIMEOUT 600)
  ladder_gpu_lock(profile_metrics ALONE)
else()
  ladder_skipped_test(profile_metrics "gpu;profiler" "ncu (Nsight Compute) not found: ./ladder profile cannot run here")
endif()

# Adjacent reduce stages differ only in a bounded region below their header comment.
ladder_python_test(stage_diffs tests.check_stage_diffs)
# Every experiment patch applies to its stage file as it is now (and a stale one is refused).
ladder_python_test(experiments_apply tests.check_experiments)
# The runner behind ./ladder (tests/test_runner.py says what each checks).
foreach(case describe stage_roles test_command presets docs_unchanged arguments gpu_slots why_failed ncu_units)
  ladder_python_test(runner.${case} tests.test_runner ${case})
endforeach()
set_tests_properties(runner.describe runner.docs_unchanged PROPERTIES COST 30)
# Configure notes said once; -G for Debug device code, -lineinfo otherwise (a fresh build directory of its own).
ladder_python_test(configure_flags tests.check_configure ${PROJECT_SOURCE_DIR})
set_tests_properties(configure_flags PROPERTIES TIMEOUT 300)
# The docs are what scripts/make_docs.py makes of the templates and the measured results, every stage has a page,
# the result files parse, the charts exist; and the claim checks are seen to catch planted wrong claims.
ladder_python_test(docs_check scripts.make_docs --check)
ladder_python_test(docs_claims_catch_planted scripts.make_docs --self-test)
set_tests_properties(docs_check docs_claims_catch_planted PROPERTIES SKIP_RETURN_CODE 77 COST 35)
# The intrinsics readers reach for, run by the host run or refused by name (tests/check_host_intrinsics.py).
ladder_python_test(host_intrinsics tests.check_host_intrinsics)
set_tests_properties(host_intrinsics PROPERTIES COST 20)
# A stage is a folder and a page template: tried on a scratch copy of the project (tests/check_add_stage.py).
ladder_python_test(add_stage tests.check_add_stage)
set_tests_properties(add_stage PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 COST 100)

# The orderings and scopes one GPU hides (a relaxed ticket, a non-coherent read of what the launch wrote, a
# block-scope atomic), read from each stage's sm_90 machine code on the CPU (scripts/sass.py says what a pass
# proves). nvdisasm comes from the CUDA Toolkit or from <build>/tools, where ./ladder test puts it from PyPI;
# without it these tests report skipped (exit 77), saying how to install it.
function(ladder_sass_test name labels)
  ladder_python_test(${name} scripts.sass --nvcc ${CMAKE_CUDA_COMPILER} --tools ${CMAKE_BINARY_DIR}/tools ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()
# The saved machine code (docs/results/sass_*.txt) is what nvcc makes of the current kernels: an edited kernel
# fails until ./ladder profile runs again on a GPU (tests/check_saved_sass.py); its self-test plants an edit.
ladder_python_test(saved_sass tests.check_saved_sass --tools ${CMAKE_BINARY_DIR}/tools)
ladder_python_test(saved_sass_sees_an_edit tests.check_saved_sass --tools ${CMAKE_BINARY_DIR}/tools --self-test)
set_tests_properties(saved_sass saved_sass_sees_an_edit PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 COST 15)
foreach(stage ${stages})
  file(GLOB sources ${PROJECT_SOURCE_DIR}/${stage}/*.cu)
  ladder_sass_test(${stage}.sass cpu ${sources})
endforeach()

# The host runs behind the stage pages' pictures and counts (scripts/host_run.py: each stage's own device code run
# on the host): exact sums, the machine code's facts, shuffles and loads in flight, every profiled line against
# Nsight Compute's source counters in docs/results/ncu_source.csv; each planted drift must fail and a comment-only
# edit pass (tests/check_thread_models.py: per stage, its drifts, and what holds across stages). And the pictures'
# legibility: width, font size, contrast, with planted faults (tests/check_pictures.py).
ladder_python_test(thread_models tests.check_thread_models --cxx ${CMAKE_CXX_COMPILER})
foreach(stage ${stages})
  ladder_python_test(thread_models.${stage} tests.check_thread_models --cxx ${CMAKE_CXX_COMPILER} --stage ${stage})
  ladder_python_test(thread_models.${stage}.drifts tests.check_thread_models --cxx ${CMAKE_CXX_COMPILER}
                     --drifts ${stage})
  set_tests_properties(thread_models.${stage}.drifts PROPERTIES COST 20)
endforeach()
ladder_python_test(pictures tests.check_pictures)
# The charts' layout (no legend over data, no two series alike, no hidden point, no colliding labels), with planted
# faults (tests/check_charts.py); skipped without matplotlib.
ladder_python_test(charts tests.check_charts)
set_tests_properties(charts PROPERTIES SKIP_RETURN_CODE 77)
# ./ladder try STAGE mine.cu as a reader runs it, with planted bugs: every case with the GPU hidden, then, where
# there is one, the correct copy on it. The copies are built in this build directory, after the planted-bug
# programs (the fixture mutants.build builds there too).
ladder_python_test(try_file tests.check_try_file)
ladder_python_test(try_file.gpu tests.check_try_file --correct)
set_tests_properties(try_file PROPERTIES TIMEOUT 2400 FIXTURES_REQUIRED ladder_mutants FIXTURES_SETUP try_copies
                                         COST 60)
set_tests_properties(try_file.gpu PROPERTIES LABELS gpu TIMEOUT 1200 FIXTURES_REQUIRED try_copies SKIP_RETURN_CODE 77)
ladder_gpu_lock(try_file.gpu SHARED)  # its verdicts need no shared-memory fill: a correct copy passes on any data
set_property(TEST try_file try_file.gpu APPEND PROPERTY ENVIRONMENT
             "LADDER_TOOLS=${CMAKE_BINARY_DIR}/tools;LADDER_NO_INSTALL=1")
set_property(TEST try_file APPEND PROPERTY ENVIRONMENT "CUDA_VISIBLE_DEVICES=-1")
