# include()d by the SASS checks (flash_sass.cmake, sm90_sass.cmake) with
# SASS_TEST set to the test's name: finds cuobjdump and nvdisasm in HINTS, the
# pinned pair tools/deps.sh installs under ~/.cache/q35-tools/cuda-tools, and
# PATH; sets CUOBJDUMP and nvdisasm_dir, or prints "SKIP <test>: ..." naming
# what is missing and sets SASS_TOOLS_MISSING (the caller returns: ctest's
# skip through SKIP_REGULAR_EXPRESSION).
set(cache "$ENV{HOME}/.cache")
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(cache "$ENV{XDG_CACHE_HOME}")
endif()
set(hints ${HINTS} "${cache}/q35-tools/cuda-tools/nvidia/cu13/bin")
find_program(CUOBJDUMP cuobjdump HINTS ${hints} NO_CACHE)
find_program(NVDISASM nvdisasm HINTS ${hints} NO_CACHE)
set(SASS_TOOLS_MISSING OFF)
if(NOT CUOBJDUMP OR NOT NVDISASM)
  set(missing)
  foreach(tool CUOBJDUMP NVDISASM)
    if(NOT ${tool})
      string(TOLOWER ${tool} name)
      list(APPEND missing ${name})
    endif()
  endforeach()
  list(JOIN missing " and " missing)
  list(JOIN hints ", " where)
  message("SKIP ${SASS_TEST}: ${missing} not found (looked in ${where} and PATH); "
          "tools/deps.sh installs the pair of tools/cuda-tools.txt (it did not: Q35_NO_INSTALL=1?)")
  set(SASS_TOOLS_MISSING ON)
else()
  get_filename_component(nvdisasm_dir "${NVDISASM}" DIRECTORY)
endif()

# sass_functions(SASS OUT): the text of cuobjdump -sass split into a list of one
# element per kernel ("Function : name" and its code), brackets turned into
# parentheses and semicolons dropped first so each stays one list element.
function(sass_functions sass out)
  string(REPLACE ";" "" sass "${sass}")
  string(REPLACE "[" "(" sass "${sass}")
  string(REPLACE "]" ")" sass "${sass}")
  string(REPLACE "Function : " ";Function : " functions "${sass}")
  list(REMOVE_AT functions 0)
  set(${out} "${functions}" PARENT_SCOPE)
endfunction()

# sass_count(TEXT REGEX OUT): how many times REGEX matches in TEXT (an
# instruction's count in a kernel's SASS), into OUT.
function(sass_count text regex out)
  string(REGEX MATCHALL "${regex}" hits "${text}")
  list(LENGTH hits n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()
