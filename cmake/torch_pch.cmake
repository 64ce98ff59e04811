# <torch/torch.h> takes ~25 s to parse and its precompiled header ~8 s to
# load, in every file it is given to. seed_torch_pch(TARGET) gives TARGET's
# files that include <torch/torch.h> the header compiled once (in
# seed_models), and leaves the others (most of seed: they include nothing of
# torch, or only <ATen/core/Tensor.h>) to compile without it.
#
# Files are read when CMake configures: a file that starts including
# <torch/torch.h> later compiles correctly, just without the header, until
# the next configure.
function(seed_torch_pch target)
  if(target STREQUAL "seed_models")
    target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  else()
    target_precompile_headers(${target} REUSE_FROM seed_models)
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc)$" OR source MATCHES "^\\$<")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE path)
    file(STRINGS ${path} torch_includes REGEX "^#include <torch/torch\\.h>")
    if(NOT torch_includes)
      set_source_files_properties(${path} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
