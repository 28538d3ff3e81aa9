# cmake -DSRC=<source dir> -DVERSION=<x.y> -DOUT=<header> -P Version.cmake: the header with the project version and
# the commit, at every build (rewritten only when its text changes, so nothing recompiles otherwise).
execute_process(COMMAND git -C "${SRC}" describe --always --dirty=+ --abbrev=7 --exclude=*
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
string(REPLACE "+" " with local changes" commit "${commit}")
set(text "#pragma once\n#define LADDER_VERSION \"${VERSION}\"\n#define LADDER_COMMIT \"${commit}\"\n")
file(CONFIGURE OUTPUT "${OUT}" CONTENT "${text}" @ONLY)  # leaves the file as it is where the text is the same
