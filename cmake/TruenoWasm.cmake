# WebAssembly builds (emscripten; the `wasm` preset, docs/BROWSER.md). Included by the top-level
# CMakeLists.txt when the toolchain is emscripten's.
#
# Note [WASM exceptions]
# trueno reports contract violations and unavailable backends with C++ exceptions, and the tests
# check them (EXPECT_THROW). emscripten's default turns `catch` off (a throw aborts). -fwasm-exceptions
# uses WebAssembly's own exception handling: no JavaScript trampolines around calls, so kernels cost
# the same as without exceptions. Every engine we target has it (node >= 17, Chromium >= 95,
# Firefox >= 100, Safari >= 15.2). It must be given when compiling and when linking.
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)
# Memory grows on demand (models, test matrices); start at 64 MiB.
add_link_options(-sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=67108864)

# Note [WASM threads]
# trueno's thread pool runs on pthreads, which emscripten builds on Web Workers sharing one
# SharedArrayBuffer memory: every object must be compiled with -pthread (atomics, shared memory),
# and a page needs the COOP/COEP headers (docs/BROWSER.md). A Worker starts only when the thread that
# created it returns to the event loop, so the workers are made at start-up (PTHREAD_POOL_SIZE) and
# trueno never asks for more than that by default (TRUENO_WASM_MAX_THREADS; core/threads.cpp).
# The main browser thread may not block: there emscripten spins instead of Atomics.wait.
option(TRUENO_WASM_THREADS "WebAssembly: threads (pthreads on Web Workers + SharedArrayBuffer)" ON)
set(TRUENO_WASM_MAX_THREADS 8 CACHE STRING "WebAssembly: the worker pool made at start-up (threads beyond it are not used by default)")
if(TRUENO_WASM_THREADS)
  add_compile_options(-pthread)
  add_link_options(-pthread -sPTHREAD_POOL_SIZE=${TRUENO_WASM_MAX_THREADS})
  add_compile_definitions(TRUENO_WASM_MAX_THREADS=${TRUENO_WASM_MAX_THREADS})
else()
  add_compile_definitions(TRUENO_WASM_MAX_THREADS=1)
endif()

# trueno_wasm_node_executable(<target>): an executable meant to run under node with the host's files
# visible (NODERAWFS: contracts/, tests/data/) and its environment (cmake/wasm_node_env.js), exiting
# with main's status. Tests and benchmarks only; the browser page links differently.
function(trueno_wasm_node_executable target)
  target_link_options(${target} PRIVATE -sNODERAWFS=1 -sEXIT_RUNTIME=1 -sENVIRONMENT=node,worker
    "SHELL:--pre-js ${PROJECT_SOURCE_DIR}/cmake/wasm_node_env.js")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/wasm_node_env.js)
endfunction()

# Header-only Debian libraries for WebAssembly (nlohmann/json, CLI11): their headers reached through links
# in the build tree, so that the host's /usr/include (glibc's headers) is not on the WebAssembly include
# path; as the targets their native CMake packages define.
function(trueno_wasm_header_library target header_dir)
  if(NOT EXISTS /usr/include/${header_dir})
    message(FATAL_ERROR "/usr/include/${header_dir} not found: scripts/setup.sh --deps installs it")
  endif()
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/wasm-include)
  file(CREATE_LINK /usr/include/${header_dir} ${CMAKE_BINARY_DIR}/wasm-include/${header_dir} SYMBOLIC)
  string(REPLACE "::" "_" plain ${target})
  add_library(${plain} INTERFACE)
  target_include_directories(${plain} INTERFACE ${CMAKE_BINARY_DIR}/wasm-include)
  add_library(${target} ALIAS ${plain})
endfunction()
trueno_wasm_header_library(nlohmann_json::nlohmann_json nlohmann)
trueno_wasm_header_library(CLI11::CLI11 CLI)
