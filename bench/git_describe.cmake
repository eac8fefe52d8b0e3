# Writes OUT, a header defining Q35_GIT_DESCRIBE: $Q35_GIT_DESCRIBE when the
# build's environment sets it (a copy of the tree without .git, e.g. on a
# remote GPU machine), else `git describe --always --dirty` of SRC, else
# "unknown". Only when it changed, so what includes it recompiles only after a
# commit. Run at every build.
if(DEFINED ENV{Q35_GIT_DESCRIBE} AND NOT "$ENV{Q35_GIT_DESCRIBE}" STREQUAL "")
  set(describe "$ENV{Q35_GIT_DESCRIBE}")
else()
  execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=7
                  OUTPUT_VARIABLE describe RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0 OR describe STREQUAL "")
    set(describe unknown)
  endif()
endif()
string(REGEX REPLACE "[^A-Za-z0-9_.+-]" "_" describe "${describe}")
set(text "#define Q35_GIT_DESCRIBE \"${describe}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
