# cmake -DNVCC=... -DSRC=repo -DUNIT=flash|gemm|delta [-DHINTS="dir;dir"] -P sm90_sass.cmake
# Without a GPU: compiles an sm_90a unit for sm_90a (as the build does,
# Q35_SM90=1) to a cubin with ptxas's resource report, and checks that its
# kernels have no stack frame and no spills (the report), that ptxas did not
# serialize their wgmmas (its C75xx "Potential Performance Loss" lines), and
# that the SASS (cuobjdump -sass) of each kernel holds the unit's warp-group
# MMAs, the TMA loads (UTMALDG), the register reallocation (USETMAXREG) and no
# local memory (LDL/STL). The units:
#   flash  kernels/attention_flash_sm90.cu, every variant: the MMAs of both
#          products (HGMMA.64x64x16.F32: S = Q K^T; HGMMA.64x256x16.F32:
#          O += P V); the overlap variant's kernels also a wait_group 1
#          (DEPBAR.LE gsb0, 0x1) with at least 8 of the softmax's MUFU.EX2
#          after it and before the next wait (ptxas moves waits: this is where
#          the overlap is checked), and persist's (overlap's schedule);
#   gemm   kernels/gemm_sm90.cu, both epilogues (f16 SwiGLU, f32 [gate | up]):
#          HGMMA.64x256x16.F32 (a consumer's 64 rows by 128 gate + 128 up
#          rows of w; pingpong's HGMMA.64x128x16.F32, 64 + 64); the SwiGLU
#          kernels no CALL (the IEEE division's or expf's slow path: the fast
#          q35_swiglu, kernels/reduce.cuh, has none; its ~20 instructions a
#          value stalled the tensor cores) and a MUFU.EX2 and a MUFU.RCP for
#          each of a thread's 64 values; the
#          cluster (mcast) kernels no more than the two MEMBAR.ALL.GPU of
#          their cluster barriers (none before the K loop's remote releases).
#   delta  kernels/delta_chunk_sm90.cu, the chunked delta rule's wgmma state
#          passes as the production tb4wtkh and tb4wm2kh run them (TMA):
#          HGMMA.64x32x16.F32 and their TMA loads; tb4wm2kh's multicast kernel
#          no more MEMBAR.ALL.GPU than cluster barrier arrivals (none in its
#          chunk loop); the unit's other kernels (tb4kh's parallel passes) no
#          local memory.
# cuobjdump and nvdisasm: sass_tools.cmake finds them; SKIPPED (ctest's skip)
# naming what is missing.
if(UNIT STREQUAL "gemm")
  set(SASS_TEST kernels_gemm_sm90_sass)
  set(source gemm_sm90)
  set(patterns "HGMMA\\.64x(256|128)x16\\.F32" "UTMALDG" "USETMAXREG")
elseif(UNIT STREQUAL "delta")
  set(SASS_TEST kernels_delta_sm90_sass)
  set(source delta_chunk_sm90)
  set(patterns "HGMMA\\.64x32x16\\.F32")
elseif(UNIT STREQUAL "flash")
  set(SASS_TEST kernels_flash_sm90_sass)
  set(source attention_flash_sm90)
  set(patterns "HGMMA\\.64x64x16\\.F32" "HGMMA\\.64x256x16\\.F32" "UTMALDG" "USETMAXREG")
else()
  message(FATAL_ERROR "sm90_sass.cmake: UNIT '${UNIT}' is not flash, gemm or delta")
endif()
string(REGEX REPLACE "^(attention_|experiments/)" "" who "${source}") # flash_sm90, gemm_sm90, delta_chunk_sm90
include("${CMAKE_CURRENT_LIST_DIR}/sass_tools.cmake")
if(SASS_TOOLS_MISSING)
  return()
endif()
set(cubin "${CMAKE_CURRENT_BINARY_DIR}/${who}_sm90a.cubin")
execute_process(COMMAND "${NVCC}" -std=c++17 -I${SRC} -arch=sm_90a -DQ35_SM90=1 --resource-usage -cubin
                        "${SRC}/kernels/${source}.cu" -o "${cubin}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -cubin failed on kernels/${source}.cu for sm_90a:\n${err}")
endif()
set(bad 0)
string(REGEX MATCHALL "Used [0-9]+ registers" regs "${err}${out}")
string(REGEX MATCHALL "[0-9]+ bytes stack frame, [0-9]+ bytes spill stores, [0-9]+ bytes spill loads" lmem
       "${err}${out}")
# ptxas's own word that it made the async wgmmas wait one by one (C75xx)
string(REGEX MATCHALL "wgmma.mma_async instructions are serialized[^\n]*" serialized "${err}${out}")
foreach(line IN LISTS serialized)
  message("FAIL  ${who}: ${line}")
  math(EXPR bad "${bad} + 1")
endforeach()
list(REMOVE_DUPLICATES regs)
list(REMOVE_DUPLICATES lmem)
if(NOT lmem OR NOT lmem STREQUAL "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")
  message("FAIL  ${who}: local memory in ptxas's report: '${lmem}'")
  math(EXPR bad "${bad} + 1")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "NVDISASM_PATH=${nvdisasm_dir}" "${CUOBJDUMP}" -sass "${cubin}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE sass ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CUOBJDUMP} -sass failed on ${cubin}:\n${err}")
endif()
sass_functions("${sass}" functions) # one list element per kernel (every variant)
set(found "")
set(saw_early FALSE)
foreach(f IN LISTS functions)
  string(REGEX MATCH "^Function : ([^ \t\r\n]+)" _ "${f}")
  set(name "${CMAKE_MATCH_1}")
  set(counts "")
  # delta: the unit's wgmma state pass (tb4wtkh's, by TMA); the other kernels in it (the parallel passes by
  # key head) only the local-memory check
  set(want "${patterns}")
  if(UNIT STREQUAL "delta")
    if(NOT name MATCHES "q35_delta_chunk_state_tbw")
      set(want "")
    elseif(name MATCHES "state_tbwILb1E|state_tbwm") # tb4wt, tb4wm2kh: their stages by TMA
      list(APPEND want "UTMALDG")
    endif()
  endif()
  foreach(pattern IN LISTS want)
    sass_count("${f}" "${pattern}" n)
    string(REPLACE "\\" "" what "${pattern}")
    string(APPEND counts " ${n} ${what}")
    if(n EQUAL 0)
      message("FAIL  ${who}: no ${what} in the SASS of ${name}")
      math(EXPR bad "${bad} + 1")
    endif()
  endforeach()
  sass_count("${f}" "[ \t](LDL|STL)[ .]" n_ldl)
  if(n_ldl GREATER 0)
    message("FAIL  ${who}: ${n_ldl} local-memory instructions (LDL/STL) in ${name}")
    math(EXPR bad "${bad} + 1")
  endif()
  # flash's overlap schedule (SCHED_OVERLAP = 3, and persist, its persistent
  # grid): a wait_group 1 (the product left in flight) with the softmax's ex2
  # after it and before the next wait
  if(UNIT STREQUAL "flash" AND name MATCHES "q35_flash_sm90_(kernelILi3E|persist_kernel)")
    string(FIND "${f}" "DEPBAR.LE gsb0, 0x1" at)
    if(at LESS 0)
      message("FAIL  ${who}: no wait_group 1 (DEPBAR.LE gsb0, 0x1) in ${name}: the product is not left in flight")
      math(EXPR bad "${bad} + 1")
    else()
      string(SUBSTRING "${f}" ${at} -1 rest)
      string(SUBSTRING "${rest}" 20 -1 rest)
      string(FIND "${rest}" "DEPBAR" next)
      string(SUBSTRING "${rest}" 0 ${next} window)
      sass_count("${window}" "MUFU\\.EX2" n_ex2)
      string(APPEND counts " ${n_ex2} EX2 under P V")
      if(n_ex2 LESS 8)
        message("FAIL  ${who}: ${n_ex2} MUFU.EX2 between the wait_group 1 and the next wait in ${name} "
                "(the softmax is not under the P V product)")
        math(EXPR bad "${bad} + 1")
      endif()
    endif()
  endif()
  # gemm's SwiGLU epilogue (SWIGLU = true: kernelILb1): the fast form, no subroutine
  if(UNIT STREQUAL "gemm" AND name MATCHES "q35_gemm_(gu|pp)_sm90_kernelILb1")
    sass_count("${f}" "[ \t]CALL[ .]" n_call)
    sass_count("${f}" "MUFU\\.EX2" n_ex2)
    sass_count("${f}" "MUFU\\.RCP" n_rcp)
    string(APPEND counts " ${n_ex2} EX2 ${n_rcp} RCP ${n_call} CALL")
    if(n_call GREATER 0 OR n_ex2 LESS 64 OR n_rcp LESS 64)
      message("FAIL  ${who}: the SwiGLU epilogue of ${name} has ${n_call} CALL, ${n_ex2} MUFU.EX2, ${n_rcp} "
              "MUFU.RCP (want no CALL and 64 or more of each: the fast q35_swiglu)")
      math(EXPR bad "${bad} + 1")
    endif()
  endif()
  # gemm's cluster kernels (MCAST = true: kernelILb?ELb1E): a GPU-scope memory
  # barrier only at the two cluster barriers (entry and exit), none in the K
  # loop before the remote stage releases (a .release.cluster arrival made one
  # each)
  if(UNIT STREQUAL "gemm" AND name MATCHES "q35_gemm_gu_sm90_kernelILb[01]ELb1E")
    sass_count("${f}" "MEMBAR\\.ALL\\.GPU" n_membar)
    string(APPEND counts " ${n_membar} MEMBAR.ALL.GPU")
    if(n_membar GREATER 2)
      message("FAIL  ${who}: ${n_membar} MEMBAR.ALL.GPU in ${name} (want 2: the cluster barriers; a stage "
              "release in the K loop must not fence the GPU)")
      math(EXPR bad "${bad} + 1")
    endif()
  endif()
  # delta's multicast state pass (tb4wm2kh): a GPU-scope memory barrier only
  # where a cluster barrier arrives (entry and exit, each on its converged and
  # diverged paths), none in the chunk loop's remote stage releases
  if(UNIT STREQUAL "delta" AND name MATCHES "q35_delta_chunk_state_tbwm")
    sass_count("${f}" "MEMBAR\\.ALL\\.GPU" n_membar)
    sass_count("${f}" "UCGABAR_ARV" n_arv)
    string(APPEND counts " ${n_membar} MEMBAR.ALL.GPU ${n_arv} UCGABAR_ARV")
    if(n_membar GREATER n_arv)
      message("FAIL  ${who}: ${n_membar} MEMBAR.ALL.GPU in ${name} against ${n_arv} cluster barrier arrivals (a "
              "stage release in the chunk loop must not fence the GPU)")
      math(EXPR bad "${bad} + 1")
    endif()
  endif()
  # delta's early launch (tb4wm2kh: the state pass's DEP = WM_EARLY = 1): the state pass waits for the parallel
  # pass once (griddepcontrol.wait: ACQBULK), the parallel pass by key head lets it start (launch_dependents:
  # PREEXIT)
  if(UNIT STREQUAL "delta" AND name MATCHES "q35_delta_chunk_(state_tbwmILi3ELi1E|prep_tb_khILb)")
    if(name MATCHES "state_tbwm")
      set(insn ACQBULK)
      set(saw_early TRUE)
    else()
      set(insn PREEXIT)
    endif()
    sass_count("${f}" "[ \t]${insn}[ ;]" n_dep)
    string(APPEND counts " ${n_dep} ${insn}")
    if(NOT n_dep EQUAL 1)
      message("FAIL  ${who}: ${n_dep} ${insn} in ${name} (want 1: tb4wm2kh's state pass launched early)")
      math(EXPR bad "${bad} + 1")
    endif()
  endif()
  list(APPEND found "${name}:${counts}")
endforeach()
if(UNIT STREQUAL "delta" AND NOT saw_early)
  message("FAIL  ${who}: no early-launched multicast state pass (q35_delta_chunk_state_tbwm<3, WM_EARLY>)")
  math(EXPR bad "${bad} + 1")
endif()
list(LENGTH functions n_kernels)
if(n_kernels LESS 1)
  message("FAIL  ${who}: no kernel in the SASS")
  math(EXPR bad "${bad} + 1")
endif()
if(bad GREATER 0)
  message(FATAL_ERROR "${who}'s SASS: ${bad} check(s) failed")
endif()
list(JOIN found ", " found)
message("ok    sm_90a ${who} (${n_kernels} kernels): ${regs}; ${lmem}; ${found}; no LDL/STL")
