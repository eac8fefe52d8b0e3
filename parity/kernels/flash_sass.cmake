# cmake -DNVCC=... -DSRC=repo -DARCHS="80;90" [-DHINTS="dir;dir"] -P flash_sass.cmake
# Without a GPU: compiles kernels/attention_flash.cu and
# kernels/experiments/attention_flash.cu (the production and the experiment
# variants) to cubins for each architecture and checks with `cuobjdump -sass`,
# kernel by kernel (every variant, M and KV split), that each holds tensor-core MMA instructions (HMMA),
# i.e. that mma.sync reached the SASS, and no local memory (LDL/STL). Below
# sm_90 a kernel with no HMMA must be a stub (BPT.TRAP: a KV split, or more
# shared memory than the architecture has); on sm_90 every kernel is real.
# cuobjdump runs nvdisasm; not every CUDA toolkit carries them: tools/deps.sh
# installs the pinned pair of tools/cuda-tools.txt under
# ~/.cache/q35-tools/cuda-tools where the toolkit has none, and fails when it
# cannot (unless Q35_NO_INSTALL=1). Where either is still missing this test is
# SKIPPED (ctest's skip, SKIP_REGULAR_EXPRESSION), naming what it looked for.
set(SASS_TEST kernels_flash_hmma)
include("${CMAKE_CURRENT_LIST_DIR}/sass_tools.cmake")
if(SASS_TOOLS_MISSING)
  return()
endif()
set(bad 0)
foreach(sm ${ARCHS})
  set(sass "")
  foreach(unit attention_flash experiments/attention_flash)
    string(REPLACE "/" "_" stem "${unit}")
    set(cubin "${CMAKE_CURRENT_BINARY_DIR}/${stem}_sm${sm}.cubin")
    execute_process(COMMAND "${NVCC}" -std=c++17 -I${SRC} -arch=sm_${sm} -cubin "${SRC}/kernels/${unit}.cu"
                            -o "${cubin}"
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "nvcc -cubin failed on kernels/${unit}.cu for sm_${sm}:\n${err}")
    endif()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env "NVDISASM_PATH=${nvdisasm_dir}" "${CUOBJDUMP}" -sass "${cubin}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE unit_sass ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${CUOBJDUMP} -sass failed on the sm_${sm} cubin of kernels/${unit}.cu:\n${err}")
    endif()
    string(APPEND sass "${unit_sass}")
  endforeach()
  sass_functions("${sass}" functions) # one list element per kernel
  set(bad_before ${bad})
  set(n_real 0)
  set(n_stub 0)
  set(n_hmma_all 0)
  foreach(f IN LISTS functions)
    string(REGEX MATCH "^Function : ([^ \t\r\n]+)" _ "${f}")
    set(name "${CMAKE_MATCH_1}")
    sass_count("${f}" "HMMA\\.16816\\.F32" n_hmma)
    sass_count("${f}" "[ \t](LDL|STL)[ .]" n_lmem)
    math(EXPR n_hmma_all "${n_hmma_all} + ${n_hmma}")
    if(n_lmem GREATER 0)
      message("FAIL  sm_${sm}: ${n_lmem} local-memory instructions (LDL/STL) in ${name}")
      math(EXPR bad "${bad} + 1")
    endif()
    if(n_hmma GREATER 0)
      math(EXPR n_real "${n_real} + 1")
    elseif(sm LESS 90 AND f MATCHES "BPT\\.TRAP")
      math(EXPR n_stub "${n_stub} + 1")
    else()
      message("FAIL  sm_${sm}: no HMMA.16816.F32 in ${name} (${CUOBJDUMP})")
      math(EXPR bad "${bad} + 1")
    endif()
  endforeach()
  sass_count("${sass}" "LDSM\\.16\\.M[T]?88\\.4" n_ldsm)
  if(n_real EQUAL 0)
    message("FAIL  sm_${sm}: no kernel with HMMA.16816.F32 in the SASS of the flash kernels (${CUOBJDUMP})")
    math(EXPR bad "${bad} + 1")
  elseif(bad EQUAL bad_before)
    message("ok    sm_${sm}: ${n_real} kernels with HMMA.16816.F32 (${n_hmma_all} in all, ${n_ldsm} LDSM), "
            "${n_stub} trap stubs, no LDL/STL, in kernels/attention_flash.cu and kernels/experiments/attention_flash.cu")
  endif()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} flash kernel(s) without tensor-core MMA or with local memory")
endif()
