# cmake -DNVCC=... -DSRC=repo -DARCHS="80;90" [-DHINTS="dir;dir"] -P flash_sass.cmake
# Without a GPU: compiles kernels/attention_flash.cu to a cubin for each
# architecture and checks with `cuobjdump -sass` that its kernels hold
# tensor-core MMA instructions (HMMA), i.e. that mma.sync reached the SASS.
# cuobjdump is not in every CUDA toolkit: tools/deps.sh installs it (PyPI's
# nvidia-cuda-cuobjdump wheel under ~/.cache/q35-tools); without it this FAILS.
find_program(CUOBJDUMP cuobjdump
  HINTS ${HINTS} "$ENV{HOME}/.cache/q35-tools/nvidia/cu13/bin" "$ENV{HOME}/.cache/q35-tools/nvidia/cu12/bin"
        "$ENV{HOME}/.cache/q35-tools/nvidia/cuda_cuobjdump/bin"
  NO_CACHE)
if(NOT CUOBJDUMP)
  message(FATAL_ERROR "cuobjdump not found (not on PATH, not beside nvcc, not in ~/.cache/q35-tools): the flash "
                      "kernel's SASS cannot be checked. Run tools/deps.sh, or: python3 -m pip install --target "
                      "~/.cache/q35-tools nvidia-cuda-cuobjdump")
endif()
set(bad 0)
foreach(sm ${ARCHS})
  set(cubin "${CMAKE_CURRENT_BINARY_DIR}/attention_flash_sm${sm}.cubin")
  execute_process(COMMAND "${NVCC}" -std=c++17 -I${SRC} -arch=sm_${sm} -cubin "${SRC}/kernels/attention_flash.cu"
                          -o "${cubin}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc -cubin failed for sm_${sm}:\n${err}")
  endif()
  execute_process(COMMAND "${CUOBJDUMP}" -sass "${cubin}" RESULT_VARIABLE rc OUTPUT_VARIABLE sass ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CUOBJDUMP} -sass failed on the sm_${sm} cubin:\n${err}")
  endif()
  string(REGEX MATCHALL "HMMA\\.16816\\.F32[^ ;]*" hmma "${sass}")
  string(REGEX MATCHALL "LDSM\\.16\\.M[T]?88\\.4" ldsm "${sass}")
  list(LENGTH hmma n_hmma)
  list(LENGTH ldsm n_ldsm)
  if(n_hmma EQUAL 0)
    message("FAIL  sm_${sm}: no HMMA.16816.F32 in the SASS of attention_flash.cu (${CUOBJDUMP})")
    math(EXPR bad "${bad} + 1")
  else()
    message("ok    sm_${sm}: ${n_hmma} HMMA.16816.F32, ${n_ldsm} LDSM (ldmatrix) instructions in attention_flash.cu")
  endif()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "the flash kernel has no tensor-core MMA for ${bad} architecture(s)")
endif()
