# Dependencies come from installed packages; nothing is downloaded at build time.
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
find_package(Python3 COMPONENTS Interpreter REQUIRED)  # the tests' checks of the source and the machine code
foreach(package CLI11 fmt)
  find_package(${package} CONFIG QUIET)
  if(NOT ${package}_FOUND)
    string(TOLOWER ${package} debian)
    message(FATAL_ERROR "${package} not found: install it with 'apt-get install lib${debian}-dev' (or point "
                        "${package}_DIR at its CMake config)")
  endif()
endforeach()
