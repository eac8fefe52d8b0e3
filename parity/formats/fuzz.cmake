# The libFuzzer target for the GGUF reader and the qwen35 loader (parity/formats/fuzz_gguf.c)
# and its ctest.
#
# The project's C compiler is gcc, which has no libFuzzer, so the target is built
# with clang directly (add_custom_command, part of ALL) when a clang is found that
# can link -fsanitize=fuzzer. That is probed here at configure time, so a missing
# fuzzer runtime never breaks the build: without one a STATUS line says why and
# the test fuzz_gguf is registered as skipped, with the reason.
#
# The ctest fuzz_gguf (label fuzz) fuzzes for Q35_FUZZ_SECONDS over a copy of the
# seeds (data/fixtures/gguf-bad/*.gguf, data/fixtures/gguf-seed/*.gguf: a valid
# GGUF and a small loadable qwen35 model) in
# parity/formats/fuzz/work of the build tree; new inputs and crash artifacts go
# there, never into the repository. This file is also that test's runner: ctest
# calls `cmake -P fuzz.cmake` with Q35_FUZZ_EXE, Q35_FUZZ_WORK, Q35_SOURCE_DIR and
# Q35_FUZZ_SECONDS set.

if(CMAKE_SCRIPT_MODE_FILE)
  # ---- the runner (cmake -P) ------------------------------------------------
  foreach(var Q35_FUZZ_EXE Q35_FUZZ_WORK Q35_SOURCE_DIR Q35_FUZZ_SECONDS)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "fuzz.cmake -P: ${var} is not set")
    endif()
  endforeach()
  file(REMOVE_RECURSE "${Q35_FUZZ_WORK}")
  file(MAKE_DIRECTORY "${Q35_FUZZ_WORK}/corpus" "${Q35_FUZZ_WORK}/artifacts")
  file(GLOB seeds "${Q35_SOURCE_DIR}/data/fixtures/gguf-bad/*.gguf"
                  "${Q35_SOURCE_DIR}/data/fixtures/gguf-seed/*.gguf")
  list(LENGTH seeds n_seeds)
  if(n_seeds EQUAL 0)
    message(FATAL_ERROR "fuzz_gguf: no seeds under ${Q35_SOURCE_DIR}/data/fixtures")
  endif()
  file(COPY ${seeds} DESTINATION "${Q35_FUZZ_WORK}/corpus")
  message(STATUS "fuzz_gguf: ${Q35_FUZZ_SECONDS} s over ${n_seeds} seeds copied to ${Q35_FUZZ_WORK}/corpus")
  execute_process(
    COMMAND "${Q35_FUZZ_EXE}" -max_total_time=${Q35_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
            -print_final_stats=1 "-artifact_prefix=${Q35_FUZZ_WORK}/artifacts/" "${Q35_FUZZ_WORK}/corpus"
    WORKING_DIRECTORY "${Q35_FUZZ_WORK}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzz_gguf failed (${rc}): the input that broke it is under ${Q35_FUZZ_WORK}/artifacts")
  endif()
  return()
endif()

# ---- configure: probe clang, build the target, register the test -------------
set(Q35_FUZZ_SECONDS 60 CACHE STRING "Seconds the fuzz_gguf ctest fuzzes for")
if(NOT Q35_FUZZ_SECONDS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "Q35_FUZZ_SECONDS must be a positive whole number of seconds, not '${Q35_FUZZ_SECONDS}'")
endif()

set(q35_fuzz_install_hint "Debian: apt-get install clang libclang-rt-14-dev")
find_program(Q35_CLANG NAMES clang DOC "clang, to build the libFuzzer target fuzz_gguf")
if(NOT Q35_CLANG)
  message(STATUS "fuzz_gguf: not built: no clang found (the C compiler, ${CMAKE_C_COMPILER_ID}, has no libFuzzer; "
                 "${q35_fuzz_install_hint})")
  q35_skipped_test(fuzz_gguf fuzz "no clang found (${q35_fuzz_install_hint}; tools/deps.sh installs them)")
  return()
endif()

set(q35_fuzz_probe "${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe")
file(MAKE_DIRECTORY "${q35_fuzz_probe}")
file(WRITE "${q35_fuzz_probe}/probe.c"
     "#include <stddef.h>\n#include <stdint.h>\n"
     "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);\n"
     "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void)data; (void)size; return 0; }\n")
execute_process(
  COMMAND "${Q35_CLANG}" -fsanitize=fuzzer,address,undefined "${q35_fuzz_probe}/probe.c" -o "${q35_fuzz_probe}/probe"
  RESULT_VARIABLE q35_fuzz_probe_rc
  OUTPUT_VARIABLE q35_fuzz_probe_out
  ERROR_VARIABLE q35_fuzz_probe_out)
if(NOT q35_fuzz_probe_rc EQUAL 0)
  string(REGEX MATCH "[^\n]*(error|cannot find)[^\n]*" q35_fuzz_probe_why "${q35_fuzz_probe_out}")
  if(NOT q35_fuzz_probe_why)
    set(q35_fuzz_probe_why "${q35_fuzz_probe_rc}") # it did not run: the reason execute_process gives
  endif()
  message(STATUS "fuzz_gguf: not built: ${Q35_CLANG} cannot link -fsanitize=fuzzer,address,undefined "
                 "(${q35_fuzz_probe_why}); ${q35_fuzz_install_hint}")
  q35_skipped_test(fuzz_gguf fuzz "${Q35_CLANG} cannot link -fsanitize=fuzzer (${q35_fuzz_install_hint})")
  return()
endif()

# The reader, the loader and what they link: the quant type table dispatches to
# the codecs.
set(q35_fuzz_sources
  ${PROJECT_SOURCE_DIR}/parity/formats/fuzz_gguf.c
  ${PROJECT_SOURCE_DIR}/core/gguf_read.c
  ${PROJECT_SOURCE_DIR}/model/qwen35.c
  ${PROJECT_SOURCE_DIR}/core/escape.c
  ${PROJECT_SOURCE_DIR}/core/outfile.c
  ${PROJECT_SOURCE_DIR}/core/error.c
  ${PROJECT_SOURCE_DIR}/core/quant.c
  ${PROJECT_SOURCE_DIR}/core/quant_float.c
  ${PROJECT_SOURCE_DIR}/core/quant_legacy.c
  ${PROJECT_SOURCE_DIR}/core/quant_kquants.c
  ${PROJECT_SOURCE_DIR}/core/quant_grids.c
  ${PROJECT_SOURCE_DIR}/core/quant_iq_search.c
  ${PROJECT_SOURCE_DIR}/core/quant_iq1.c
  ${PROJECT_SOURCE_DIR}/core/quant_iq2.c
  ${PROJECT_SOURCE_DIR}/core/quant_iq3.c)
set(q35_fuzz_headers
  ${PROJECT_SOURCE_DIR}/core/gguf.h
  ${PROJECT_SOURCE_DIR}/model/qwen35.h
  ${PROJECT_SOURCE_DIR}/core/escape.h
  ${PROJECT_SOURCE_DIR}/core/outfile.h
  ${PROJECT_SOURCE_DIR}/core/error.h
  ${PROJECT_SOURCE_DIR}/core/quant.h
  ${PROJECT_SOURCE_DIR}/core/quant_blocks.h
  ${PROJECT_SOURCE_DIR}/core/quant_blocks_iq.h
  ${PROJECT_SOURCE_DIR}/core/quant_grids.h
  ${PROJECT_SOURCE_DIR}/core/quant_internal.h
  ${PROJECT_SOURCE_DIR}/core/grids/iq1s.inc
  ${PROJECT_SOURCE_DIR}/core/grids/iq2s.inc
  ${PROJECT_SOURCE_DIR}/core/grids/iq2xs.inc
  ${PROJECT_SOURCE_DIR}/core/grids/iq2xxs.inc
  ${PROJECT_SOURCE_DIR}/core/grids/iq3s.inc
  ${PROJECT_SOURCE_DIR}/core/grids/iq3xxs.inc
  ${PROJECT_SOURCE_DIR}/core/half.h)
# UB aborts (-fno-sanitize-recover) so that libFuzzer reports it as a crash.
set(q35_fuzz_flags -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Wall -Wextra)
if(Q35_WERROR)
  list(APPEND q35_fuzz_flags -Werror)
endif()
# In a folder of its own: the target's name is taken by the target.
set(q35_fuzz_exe "${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_gguf")
add_custom_command(
  OUTPUT "${q35_fuzz_exe}"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/fuzz"
  COMMAND "${Q35_CLANG}" ${q35_fuzz_flags} "-I${PROJECT_SOURCE_DIR}" ${q35_fuzz_sources} -lm -pthread -o "${q35_fuzz_exe}"
  DEPENDS ${q35_fuzz_sources} ${q35_fuzz_headers}
  COMMENT "Building the libFuzzer target fuzz_gguf with ${Q35_CLANG}"
  VERBATIM)
add_custom_target(fuzz_gguf ALL DEPENDS "${q35_fuzz_exe}")

math(EXPR q35_fuzz_timeout "${Q35_FUZZ_SECONDS} + 120")
add_test(NAME fuzz_gguf
         COMMAND ${CMAKE_COMMAND} "-DQ35_FUZZ_EXE=${q35_fuzz_exe}" "-DQ35_FUZZ_WORK=${CMAKE_CURRENT_BINARY_DIR}/fuzz/work"
                 "-DQ35_SOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DQ35_FUZZ_SECONDS=${Q35_FUZZ_SECONDS}"
                 -P "${CMAKE_CURRENT_LIST_FILE}")
set_tests_properties(fuzz_gguf PROPERTIES LABELS fuzz TIMEOUT ${q35_fuzz_timeout})
message(STATUS "fuzz_gguf: built with ${Q35_CLANG}; ctest fuzz_gguf fuzzes for ${Q35_FUZZ_SECONDS} s (Q35_FUZZ_SECONDS)")
