# torch's CMake config adds one `-gencode arch=compute_XX,code=...` pair to
# CMAKE_CUDA_FLAGS for each GPU of TORCH_CUDA_ARCH_LIST; without that list
# and without a visible GPU (a cluster's login node, a container build) it
# adds its "common" list, which can name GPUs the installed nvcc no longer
# compiles for: torch 2.11's keeps sm_50, which CUDA 13 dropped. nvcc then
# fails every CUDA compile, first the OpenMP check of CUDA, whose error
# names neither. The pairs the installed nvcc cannot compile are dropped
# here, and the configure log names them.
function(seed_drop_unsupported_cuda_architectures)
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch
                  OUTPUT_VARIABLE listed RESULT_VARIABLE status ERROR_QUIET)
  if(NOT status EQUAL 0)
    return()  # nvcc before 11.1 cannot list them; torch's flags stay as they are
  endif()
  string(REGEX MATCHALL "compute_[0-9]+" supported "${listed}")
  string(REGEX MATCHALL "-gencode[ =]arch=compute_[0-9]+[a-z]?,code=[^ ]+" pairs "${CMAKE_CUDA_FLAGS}")
  set(flags "${CMAKE_CUDA_FLAGS}")
  set(kept "")
  set(dropped "")
  foreach(pair IN LISTS pairs)
    string(REGEX MATCH "compute_[0-9]+" architecture "${pair}")
    string(REGEX REPLACE ".*code=" "" code "${pair}")
    if(architecture IN_LIST supported)
      list(APPEND kept ${code})
    else()
      list(APPEND dropped ${code})
      string(REPLACE "${pair}" "" flags "${flags}")
    endif()
  endforeach()
  if(NOT dropped)
    return()
  endif()
  list(JOIN kept ", " kept)
  list(JOIN dropped ", " dropped)
  if(NOT kept)
    message(FATAL_ERROR "nvcc (${CMAKE_CUDA_COMPILER}) compiles for none of the GPUs torch asked for "
                        "(${dropped}); name yours, e.g. -DTORCH_CUDA_ARCH_LIST=\"8.0;9.0\"")
  endif()
  message(STATUS "seed: CUDA code for ${kept}; not ${dropped}, which this nvcc does not compile for "
                 "(-DTORCH_CUDA_ARCH_LIST picks the GPUs)")
  string(REGEX REPLACE "  +" " " flags "${flags}")
  set(CMAKE_CUDA_FLAGS "${flags}" PARENT_SCOPE)
endfunction()
