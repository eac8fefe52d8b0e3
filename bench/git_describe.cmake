# Writes OUT, a header defining Q35_GIT_DESCRIBE as `git describe --always
# --dirty` of SRC ("unknown" outside a git checkout), only when it changed, so
# what includes it recompiles only after a commit. Run at every build.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=7
                OUTPUT_VARIABLE describe RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0 OR describe STREQUAL "")
  set(describe unknown)
endif()
set(text "#define Q35_GIT_DESCRIBE \"${describe}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
