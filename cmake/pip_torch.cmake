# Building against pip's torch (a GPU machine's CUDA build, found through
# torch.utils.cmake_prefix_path; scripts/setup.sh --cuda) instead of Debian's
# libtorch brings two clashes with libraries seed takes from the system.
# Both are detected from the torch found, and settled here:
#
# 1. torch's include folder carries a fmt of its own, which the system's
#    spdlog does not compile with. The system's fmt and spdlog headers go
#    ahead of it through a folder of links (GCC ignores -I of a system folder
#    such as /usr/include, so the folders themselves cannot be named).
# 2. libtorch exports std::filesystem functions of its own, and calls from
#    seed that bind to them crash (remove_all). libstdc++ becomes the first
#    library every seed binary needs, so the dynamic linker finds
#    libstdc++'s definitions before torch's.

# The first folder of `target`'s include folders that holds `header`.
function(seed_include_dir_of target header out)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  foreach(dir IN LISTS dirs CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    if(EXISTS "${dir}/${header}")
      set(${out} "${dir}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${header} not found in the include folders of ${target}")
endfunction()

seed_include_dir_of(fmt::fmt fmt/core.h fmt_dir)
set(seed_torch_fmt "")
foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
  if(EXISTS "${dir}/fmt/core.h" AND NOT dir STREQUAL fmt_dir)
    set(seed_torch_fmt "${dir}")
  endif()
endforeach()
if(seed_torch_fmt)
  set(ahead "${CMAKE_BINARY_DIR}/include-ahead-of-torch")
  file(MAKE_DIRECTORY "${ahead}")
  seed_include_dir_of(spdlog::spdlog spdlog/spdlog.h spdlog_dir)
  file(CREATE_LINK "${fmt_dir}/fmt" "${ahead}/fmt" SYMBOLIC)
  file(CREATE_LINK "${spdlog_dir}/spdlog" "${ahead}/spdlog" SYMBOLIC)
  include_directories(BEFORE "${ahead}")
  message(STATUS "torch carries its own fmt (${seed_torch_fmt}): ${fmt_dir}/fmt and ${spdlog_dir}/spdlog go first")
endif()

set(seed_torch_exports_filesystem OFF)
find_program(SEED_NM nm)
# TORCH_LIBRARIES names imported targets; the shared objects are in the
# install prefix's lib folder.
file(GLOB torch_shared "${TORCH_INSTALL_PREFIX}/lib/libtorch*.so")
foreach(candidate IN LISTS torch_shared)
  if(SEED_NM)
    execute_process(COMMAND ${SEED_NM} -D --defined-only "${candidate}" OUTPUT_VARIABLE symbols ERROR_QUIET)
    if(symbols MATCHES "_ZNSt10filesystem[0-9a-zA-Z_]*remove_all")
      set(seed_torch_exports_filesystem ON)
    endif()
  endif()
endforeach()
if(seed_torch_exports_filesystem)
  # By its path: a compiler whose own folder holds only libstdc++.a links
  # -lstdc++ statically, which leaves the symbols to torch. In the flags,
  # ahead of every object and library.
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE seed_libstdcxx
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${seed_libstdcxx}" OR NOT EXISTS "${seed_libstdcxx}")
    message(FATAL_ERROR "torch exports std::filesystem, and ${CMAKE_CXX_COMPILER} finds no shared libstdc++.so.6 to "
                        "link ahead of it")
  endif()
  string(APPEND CMAKE_EXE_LINKER_FLAGS " -Wl,--push-state,--no-as-needed ${seed_libstdcxx} -Wl,--pop-state")
  message(STATUS "torch exports std::filesystem: ${seed_libstdcxx} is linked first")
endif()
