# Checks of the source tree, the docs, the host runs and the machine code (Python, from the package `scripts`).

# ./ladder profile's sections and metrics exist on this GPU and its rows parse (one stage, one launch).
if(Python3_Interpreter_FOUND AND LADDER_NCU)
  add_test(NAME profile_metrics COMMAND ${Python3_EXECUTABLE} -m scripts.ladder profile
           --build ${CMAKE_BINARY_DIR} --ncu-check 05_shuffle WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(profile_metrics PROPERTIES LABELS "gpu;profiler" SKIP_REGULAR_EXPRESSION "no usable GPU"
                       RESOURCE_LOCK gpu TIMEOUT 600)
else()
  ladder_skipped_test(profile_metrics "gpu;profiler" "ncu (Nsight Compute) not found: ./ladder profile cannot run here")
endif()

if(Python3_Interpreter_FOUND)
  # Adjacent reduce stages differ only in a bounded region below their header comment.
  ladder_python_test(stage_diffs tests.check_stage_diffs)
  # The docs are what scripts/make_docs.py makes of the templates and the measured results, every stage
  # has a page, the result files parse, and the charts exist.
  # Every experiment patch applies to its stage file as it is now (and a stale one is refused).
  ladder_python_test(experiments_apply tests.check_experiments)
  # The runner behind ./ladder (tests/test_runner.py says what each checks).
  foreach(case describe stage_roles test_command presets docs_unchanged arguments)
    ladder_python_test(runner.${case} tests.test_runner ${case})
  endforeach()
  # Configure notes said once; -G for Debug device code, -lineinfo otherwise (a fresh build directory of its own).
  ladder_python_test(configure_flags tests.check_configure ${PROJECT_SOURCE_DIR})
  set_tests_properties(configure_flags PROPERTIES TIMEOUT 300)
  ladder_python_test(docs_check scripts.make_docs --check)
  set_tests_properties(docs_check PROPERTIES SKIP_RETURN_CODE 77)
  # ...and the claim checks of docs_check are seen to catch planted wrong claims.
  ladder_python_test(docs_claims_catch_planted scripts.make_docs --self-test)
  set_tests_properties(docs_claims_catch_planted PROPERTIES SKIP_RETURN_CODE 77)
  # Adding a stage is a directory, a line and a template: tried on a copy of the project (tests/check_add_stage.py).
  ladder_python_test(add_stage tests.check_add_stage)
  set_tests_properties(add_stage PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# The orderings and scopes one GPU hides (a relaxed ticket, a non-coherent read of what the launch wrote, a
# block-scope atomic), read from each stage's sm_90 machine code on the CPU (tests/check_sass.py says what a pass
# proves). nvdisasm comes from the CUDA Toolkit or from <build>/tools, where ./ladder test puts it from PyPI;
# without it these tests report skipped (exit 77), saying how to install it.
function(ladder_sass_test name labels)
  ladder_python_test(${name} scripts.sass --nvcc ${CMAKE_CUDA_COMPILER} --tools ${CMAKE_BINARY_DIR}/tools ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()
if(Python3_Interpreter_FOUND)
  # The saved machine code (docs/results/sass_*.txt) is what nvcc makes of the current kernels: an edited kernel
  # fails until ./ladder profile runs again on a GPU (tests/check_saved_sass.py); its self-test plants an edit.
  ladder_python_test(saved_sass tests.check_saved_sass --tools ${CMAKE_BINARY_DIR}/tools)
  ladder_python_test(saved_sass_sees_an_edit tests.check_saved_sass --tools ${CMAKE_BINARY_DIR}/tools --self-test)
  set_tests_properties(saved_sass saved_sass_sees_an_edit PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  get_property(sass_stages GLOBAL PROPERTY LADDER_STAGES)
  foreach(stage ${sass_stages})
    file(GLOB sources ${PROJECT_SOURCE_DIR}/${stage}/*.cu)
    ladder_sass_test(${stage}.sass cpu ${sources})
  endforeach()
endif()

# The host runs behind the stage pages' pictures and counts (scripts/host_run.py: each stage's own device code run
# on the host): exact sums, the machine code's facts, shuffles and loads in flight, every profiled line against
# Nsight Compute's source counters in docs/results/ncu_source.csv; each planted drift must fail and a comment-only
# edit pass (tests/check_thread_models.py). And the pictures' legibility: width, font size, contrast, with planted
# faults (tests/check_pictures.py).
if(Python3_Interpreter_FOUND)
  ladder_python_test(thread_models tests.check_thread_models --cxx ${CMAKE_CXX_COMPILER})
  foreach(stage ${stages})
    ladder_python_test(thread_models.${stage} tests.check_thread_models --cxx ${CMAKE_CXX_COMPILER} --stage ${stage})
  endforeach()
  ladder_python_test(pictures tests.check_pictures)
  # ./ladder try STAGE mine.cu as a reader runs it, with planted bugs; the copies are built in this build directory,
  # after the planted-bug programs (the fixture mutants.build builds there too).
  ladder_python_test(try_file tests.check_try_file)
  set_tests_properties(try_file PROPERTIES TIMEOUT 2400 FIXTURES_REQUIRED ladder_mutants)
  set_property(TEST try_file APPEND PROPERTY ENVIRONMENT "LADDER_TOOLS=${CMAKE_BINARY_DIR}/tools;LADDER_NO_INSTALL=1")
endif()
