# Whether decy (decy/, docs/DECY.md) is built: a host tool, so never in a cross build (aarch64, wasm) nor
# in the libFuzzer build, and only where libclang's C API is found (Debian: libclang-14-dev). Included
# before src/ so that src/vulkan knows whether it can build shaders from the CUDA kernels through decy;
# the `decy` target itself is made later, by decy/CMakeLists.txt (a custom command may name a target made
# after it). Sets TRUENO_DECY (ON/OFF), TRUENO_DECY_WHY (why not, when OFF), DECY_LIBCLANG and
# DECY_LIBCLANG_INCLUDE_DIR.
set(TRUENO_DECY OFF)
set(TRUENO_DECY_WHY "")
if(CMAKE_CROSSCOMPILING)
  set(TRUENO_DECY_WHY "a host tool: not in a cross build")
elseif(TRUENO_FUZZ)
  set(TRUENO_DECY_WHY "not in the libFuzzer build")
else()
  find_path(DECY_LIBCLANG_INCLUDE_DIR clang-c/Index.h PATHS /usr/lib/llvm-14/include NO_DEFAULT_PATH)
  find_path(DECY_LIBCLANG_INCLUDE_DIR clang-c/Index.h)
  find_library(DECY_LIBCLANG NAMES clang libclang PATHS /usr/lib/llvm-14/lib NO_DEFAULT_PATH)
  find_library(DECY_LIBCLANG NAMES clang-14 clang libclang)
  if(DECY_LIBCLANG_INCLUDE_DIR AND DECY_LIBCLANG)
    set(TRUENO_DECY ON)
  else()
    set(TRUENO_DECY_WHY "libclang's C API (clang-c/Index.h and libclang.so, Debian: libclang-14-dev) not found")
  endif()
endif()
if(TRUENO_DECY)
  message(STATUS "trueno: decy built (libclang: ${DECY_LIBCLANG})")
else()
  message(STATUS "trueno: decy not built: ${TRUENO_DECY_WHY}")
endif()
