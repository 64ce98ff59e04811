# cmake/nvcc_architectures.cmake against stand-in nvcc programs, which list
# the GPUs a CUDA release compiles for as `nvcc --list-gpu-arch` does:
#   cmake -DSOURCE_DIR=REPO -DWORK_DIR=DIR -P nvcc_architectures_test.cmake
cmake_minimum_required(VERSION 3.25)
include(${SOURCE_DIR}/cmake/nvcc_architectures.cmake)

function(stand_in_nvcc name body)
  file(WRITE ${WORK_DIR}/${name} "#!/bin/sh\n${body}\n")
  file(CHMOD ${WORK_DIR}/${name} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endfunction()
file(MAKE_DIRECTORY ${WORK_DIR})
# CUDA 13 compiles for Turing (sm_75) and later only.
stand_in_nvcc(nvcc13 "printf 'compute_75\\ncompute_80\\ncompute_86\\ncompute_89\\ncompute_90\\ncompute_100\\ncompute_120\\n'")
# Before CUDA 11.1 nvcc has no --list-gpu-arch.
stand_in_nvcc(nvcc11 "echo \"nvcc fatal   : Unknown option '--list-gpu-arch'\" >&2; exit 1")

# The flags torch's config leaves, after dropping, must equal `expected`.
function(expect_flags nvcc flags expected)
  set(CMAKE_CUDA_COMPILER ${WORK_DIR}/${nvcc})
  set(CMAKE_CUDA_FLAGS "${flags}")
  seed_drop_unsupported_cuda_architectures()
  string(STRIP "${CMAKE_CUDA_FLAGS}" got)
  string(STRIP "${expected}" expected)
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR "with ${nvcc} and flags '${flags}':\n  got      '${got}'\n  expected '${expected}'")
  endif()
endfunction()

if(CASE STREQUAL "none_supported")
  expect_flags(nvcc13 " -gencode arch=compute_35,code=sm_35 -gencode arch=compute_50,code=sm_50" "")
  return()
endif()

# torch 2.11's common list without a visible GPU: sm_50 goes; sm_90a and
# compute_90's PTX stay; flags that are not -gencode pairs are left alone.
expect_flags(nvcc13
  " -DONNX_NAMESPACE=onnx_c2 -gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_90,code=compute_90 -Xcudafe --diag_suppress=cc_clobber_ignored --expt-relaxed-constexpr"
  "-DONNX_NAMESPACE=onnx_c2 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_90,code=compute_90 -Xcudafe --diag_suppress=cc_clobber_ignored --expt-relaxed-constexpr")
# The same pairs written with '='.
expect_flags(nvcc13 "-gencode=arch=compute_61,code=sm_61 -gencode=arch=compute_89,code=sm_89"
  "-gencode=arch=compute_89,code=sm_89")
# Every GPU supported: the flags are torch's.
expect_flags(nvcc13 "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_120,code=sm_120"
  "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_120,code=sm_120")
# An nvcc that cannot list its GPUs changes nothing.
expect_flags(nvcc11 "-gencode arch=compute_35,code=sm_35 -gencode arch=compute_80,code=sm_80"
  "-gencode arch=compute_35,code=sm_35 -gencode arch=compute_80,code=sm_80")

# None left: configuring stops with a message naming what to set.
execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${SOURCE_DIR} -DWORK_DIR=${WORK_DIR} -DCASE=none_supported
                        -P ${CMAKE_CURRENT_LIST_FILE}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0 OR NOT err MATCHES "sm_35, sm_50" OR NOT err MATCHES "TORCH_CUDA_ARCH_LIST")
  message(FATAL_ERROR "no supported GPU: exit ${status}, message:\n${err}")
endif()
message(STATUS "nvcc_architectures: all cases pass")
