# cmake -DCMD="exe;args" -DRC=N -DOUT=regex -P expect.cmake
# Runs CMD; passes when its exit status is RC and its stdout+stderr match OUT.
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}")
endif()
if(NOT "${out}${err}" MATCHES "${OUT}")
  message(FATAL_ERROR "output does not match: ${OUT}")
endif()
