# Per-ISA compile flags, set per source file: an ISA's kernels are compiled with exactly its flags and
# nothing else is (no -march=native in the library).
set(TRUENO_FLAGS_sse2 -msse2)
set(TRUENO_FLAGS_avx -mavx)
set(TRUENO_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(TRUENO_FLAGS_avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c -Wno-uninitialized)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND TRUENO_FLAGS_avx512 -Wno-maybe-uninitialized)  # GCC 12 false positives inside avx512fintrin.h
endif()
set(TRUENO_FLAGS_neon "")
# WebAssembly SIMD128. Only the wasm_simd tier's files get it: the scalar reference stays plain wasm.
# A module with any SIMD128 instruction needs an engine with SIMD128 (every current browser, node >= 16).
set(TRUENO_FLAGS_wasm_simd -msimd128)
# The scalar reference stays scalar: no auto-vectorization.
set(TRUENO_FLAGS_ref -fno-tree-vectorize)

if(EMSCRIPTEN)  # before the processor checks: emscripten's toolchain file says CMAKE_SYSTEM_PROCESSOR=x86
  set(TRUENO_CPU_ISAS wasm_simd)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(TRUENO_CPU_ISAS sse2 avx avx2 avx512)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(TRUENO_CPU_ISAS neon)
else()
  set(TRUENO_CPU_ISAS)
endif()

# trueno_kernel_family(<out-var> <family>): the family's scalar reference + one file per compiled ISA,
# each with its flags.
function(trueno_kernel_family out family)
  set(dir ${PROJECT_SOURCE_DIR}/src/cpu/kernels/${family})
  set(files ${dir}/${family}_ref.cpp)
  set_source_files_properties(${dir}/${family}_ref.cpp PROPERTIES COMPILE_OPTIONS "${TRUENO_FLAGS_ref}")
  foreach(isa IN LISTS TRUENO_CPU_ISAS)
    set(f ${dir}/${family}_${isa}.cpp)
    list(APPEND files ${f})
    set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${TRUENO_FLAGS_${isa}}")
  endforeach()
  set(${out} ${${out}} ${files} PARENT_SCOPE)
endfunction()

set(TRUENO_KERNEL_FAMILIES elementwise reduce normalize convert gemm qdot qdequant)

# trueno_kernel_variants(<out-var>): run-time variants beside an ISA's table (installed by
# dispatch.cpp when the CPU has the extension). Call from the directory that builds the library:
# source file properties are directory-scoped.
function(trueno_kernel_variants out)
  set(files)
  if(EMSCRIPTEN)
    # none yet (relaxed SIMD would go here, behind an explicit option: its int8 dot is not deterministic)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(f ${PROJECT_SOURCE_DIR}/src/cpu/kernels/qdot/qdot_neon_dotprod.cpp)
    set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
    list(APPEND files ${f})
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(f ${PROJECT_SOURCE_DIR}/src/cpu/kernels/qdot/qdot_avx512_vnni.cpp)
    set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${TRUENO_FLAGS_avx512};-mavx512vnni")
    list(APPEND files ${f})
    set(f ${PROJECT_SOURCE_DIR}/src/cpu/kernels/qdot/qgemm_amx.cpp)
    set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "${TRUENO_FLAGS_avx512};-mamx-tile;-mamx-int8")
    list(APPEND files ${f})
  endif()
  set(${out} ${files} PARENT_SCOPE)
endfunction()
