// The text of decy's CUDA builtins header (builtins.h). Every function here is mapped by glsl.cpp
// (kBuiltinFunctions) or rejected by check.cpp by name: declaring it only lets the parse succeed.
#include "builtins.h"

namespace decy {

const char* const kBuiltinsHeader = R"cuh(
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict
#define __DECY__ 1

struct __decy_uint3 { unsigned int x, y, z; };
extern __device__ const __decy_uint3 threadIdx, blockIdx, blockDim, gridDim;
extern __device__ const int warpSize;

// The project's prelude typedefs (src/cuda/kernels/prelude.cuh), so its kernels parse.
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ void __syncthreads();
__device__ float __shfl_xor_sync(unsigned int mask, float v, int lane_mask, int width = 32);
__device__ int __shfl_xor_sync(unsigned int mask, int v, int lane_mask, int width = 32);
__device__ unsigned int __shfl_xor_sync(unsigned int mask, unsigned int v, int lane_mask, int width = 32);
__device__ float __shfl_down_sync(unsigned int mask, float v, unsigned int delta, int width = 32);
__device__ int __shfl_down_sync(unsigned int mask, int v, unsigned int delta, int width = 32);
__device__ unsigned int __shfl_down_sync(unsigned int mask, unsigned int v, unsigned int delta, int width = 32);
__device__ unsigned long long __shfl_xor_sync(unsigned int mask, unsigned long long v, int lane_mask, int width = 32);
__device__ long long __shfl_xor_sync(unsigned int mask, long long v, int lane_mask, int width = 32);
__device__ int __syncthreads_or(int predicate);
__device__ float __shfl_sync(unsigned int mask, float v, int lane, int width = 32);
__device__ int __shfl_sync(unsigned int mask, int v, int lane, int width = 32);
__device__ unsigned int __shfl_sync(unsigned int mask, unsigned int v, int lane, int width = 32);

__device__ float expf(float);
__device__ float __expf(float);
__device__ float logf(float);
__device__ float __logf(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float fmaxf(float, float);
__device__ float fminf(float, float);
__device__ float fabsf(float);
__device__ float tanhf(float);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float powf(float, float);
__device__ float floorf(float);
__device__ float ceilf(float);
__device__ float fmaf(float, float, float);
__device__ float __fdividef(float, float);
__device__ int min(int, int);
__device__ int max(int, int);
__device__ unsigned int min(unsigned int, unsigned int);
__device__ unsigned int max(unsigned int, unsigned int);
__device__ long long min(long long, long long);
__device__ long long max(long long, long long);
__device__ unsigned long long min(unsigned long long, unsigned long long);
__device__ unsigned long long max(unsigned long long, unsigned long long);
__device__ long min(long, long);
__device__ long max(long, long);
__device__ int __float_as_int(float);
__device__ unsigned int __float_as_uint(float);
__device__ float __int_as_float(int);
__device__ float __uint_as_float(unsigned int);
// Note [Correctly rounded intrinsics] (glsl_support.cpp): each one rounded operation, never contracted.
__device__ float __fadd_rn(float, float);
__device__ float __fsub_rn(float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fdiv_rn(float, float);
__device__ double __dadd_rn(double, double);
__device__ double __dsub_rn(double, double);
__device__ double __dmul_rn(double, double);
// C's double math (Note [Double math], glsl_support.cpp: GLSL has no double exp, log, pow, sin or cos).
__device__ double exp(double);
__device__ double log(double);
__device__ double pow(double, double);
__device__ double sin(double);
__device__ double cos(double);
__device__ float exp(float);  // C++'s float overloads: as expf ...
__device__ float log(float);
__device__ float pow(float, float);
__device__ float sin(float);
__device__ float cos(float);
__device__ float __sinf(float);
__device__ float __cosf(float);
__device__ float exp2f(float);
__device__ float rintf(float);
__device__ float ldexpf(float, int);
__device__ int __float2int_rn(float);
// Their pointer arguments must be `&lvalue` (parse.cpp: out parameters).
__device__ void sincosf(float, float*, float*);
__device__ void __sincosf(float, float*, float*);
__device__ float frexpf(float, int*);

// The vector types (Note [Vector types], glsl_support.cpp) and functions declared so that kernels using them parse;
// check.cpp rejects those it does not map by name.
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct int4 { int x, y, z, w; };
struct uint4 { unsigned int x, y, z, w; };
struct uint2 { unsigned int x, y; };
struct int2 { int x, y; };
__device__ float2 make_float2(float, float);
__device__ float4 make_float4(float, float, float, float);
__device__ int2 make_int2(int, int);
__device__ int4 make_int4(int, int, int, int);
__device__ uint2 make_uint2(unsigned int, unsigned int);
__device__ uint4 make_uint4(unsigned int, unsigned int, unsigned int, unsigned int);
__device__ float __ldcs(const float*);
__device__ float4 __ldcs(const float4*);
__device__ uint4 __ldcs(const uint4*);
__device__ unsigned int __ldcs(const unsigned int*);
__device__ unsigned int atomicMax(unsigned int*, unsigned int);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ int __dp4a(int, int, int);
__device__ float atomicAdd(float*, float);
__device__ int atomicAdd(int*, int);
__device__ unsigned int atomicAdd(unsigned int*, unsigned int);
__device__ int atomicMax(int*, int);
__device__ int atomicMin(int*, int);
__device__ unsigned int atomicMin(unsigned int*, unsigned int);
__device__ int atomicOr(int*, int);
__device__ unsigned int atomicOr(unsigned int*, unsigned int);
__device__ int atomicAnd(int*, int);
__device__ unsigned int atomicAnd(unsigned int*, unsigned int);
__device__ int atomicXor(int*, int);
__device__ unsigned int atomicXor(unsigned int*, unsigned int);
__device__ int atomicExch(int*, int);
__device__ unsigned int atomicExch(unsigned int*, unsigned int);
__device__ float atomicExch(float*, float);
__device__ int atomicCAS(int*, int, int);
__device__ unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
__device__ bool signbit(float);
__device__ bool isnan(float);
// CUDA's half types (cuda_fp16.h, cuda_bf16.h) as 16- and 32-bit bit patterns (Note [Half types],
// glsl_support.cpp): conversions, arithmetic and comparisons through these functions and operators.
struct __half { unsigned short __x; };
struct __half2 { unsigned int __x; };
struct __nv_bfloat16 { unsigned short __x; };
typedef __half half;
typedef __half2 half2;
__device__ float __half2float(__half);
__device__ __half __float2half(float);
__device__ __half __float2half_rn(float);
__device__ __half __hadd(__half, __half);
__device__ __half __hsub(__half, __half);
__device__ __half __hmul(__half, __half);
__device__ __half __hdiv(__half, __half);
__device__ __half __hneg(__half);
__device__ bool __heq(__half, __half);
__device__ bool __hne(__half, __half);
__device__ bool __hlt(__half, __half);
__device__ bool __hle(__half, __half);
__device__ bool __hgt(__half, __half);
__device__ bool __hge(__half, __half);
__device__ __half operator+(const __half&, const __half&);
__device__ __half operator-(const __half&, const __half&);
__device__ __half operator*(const __half&, const __half&);
__device__ __half operator/(const __half&, const __half&);
__device__ bool operator==(const __half&, const __half&);
__device__ bool operator!=(const __half&, const __half&);
__device__ bool operator<(const __half&, const __half&);
__device__ bool operator<=(const __half&, const __half&);
__device__ bool operator>(const __half&, const __half&);
__device__ bool operator>=(const __half&, const __half&);
__device__ __half2 __floats2half2_rn(float, float);
__device__ __half2 __float2half2_rn(float);
__device__ float2 __half22float2(__half2);
__device__ float __low2float(__half2);
__device__ float __high2float(__half2);
__device__ __half __low2half(__half2);
__device__ __half __high2half(__half2);
__device__ __half2 __halves2half2(__half, __half);
__device__ __half2 __hadd2(__half2, __half2);
__device__ __half2 __hsub2(__half2, __half2);
__device__ __half2 __hmul2(__half2, __half2);
__device__ float __bfloat162float(__nv_bfloat16);
__device__ __nv_bfloat16 __float2bfloat16(float);
__device__ __nv_bfloat16 __float2bfloat16_rn(float);
// Declared so that kernels using them parse and are refused by name (check.cpp), not by a clang error.
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ unsigned int __byte_perm(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __funnelshift_r(unsigned int, unsigned int, unsigned int);
__device__ bool isfinite(float);
__device__ bool isfinite(double);
__device__ float erfcf(float);
extern "C" __device__ int printf(const char*, ...);
__device__ void __trap();
)cuh";

}  // namespace decy
