/* The cuda backend's element types for kernels (nvcc only): f16 and bf16
 * storage told apart by type, each float storage type's compute type, the
 * dtype -> storage-type dispatch, and the wrapping integer store.
 *
 * Loads and stores with the cast rules are backplane/cast.h's
 * bp_elem_load_f64, bp_elem_store_f64, bp_elem_load_i64 and
 * bp_elem_store_i64, compiled for the device too, so this backend casts
 * exactly as the others. */
#ifndef BPCU_ELEM_H
#define BPCU_ELEM_H

#include <math.h>
#include <stdint.h>

#include <type_traits>

#include <backplane/cast.h>

/* after cast.h (dtype.h): its locals named `half` would shadow this type */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct bpcu_h16 { uint16_t v; };
struct bpcu_b16 { uint16_t v; };

/* f16 / bf16 <-> f32 by the hardware's conversions, bit for bit dtype.h's
 * (round to nearest even, subnormals kept, overflow to infinity), which
 * take a dozen integer instructions and branches each; a NaN, whose bits
 * the hardware makes canonical, goes through dtype.h's to keep them. */
static __device__ __forceinline__ float bpcu_h2f(uint16_t h)
{
    return (h & 0x7fffu) > 0x7c00u ? bp_f16_to_f32(h) : __half2float(__ushort_as_half(h));
}
static __device__ __forceinline__ uint16_t bpcu_f2h(float f)
{
    return f != f ? bp_f32_to_f16(f) : __half_as_ushort(__float2half_rn(f));
}
static __device__ __forceinline__ uint16_t bpcu_f2b(float f)
{
    return f != f ? bp_f32_to_bf16(f) : __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

/* Float storage S: compute type C (f32 for f16/bf16/f32, f64 for f64), load,
 * store of a C, and store of a double rounded once to S (f16/bf16 as
 * bp_f64_to_f16/bf16 and the binary backend's bp_elem_store_f64 round: to
 * f32 rounding to odd, then to S; a plain (float) cast first would round
 * twice). The second step is the hardware conversion (bpcu_f2h/bpcu_f2b:
 * the same bits as dtype.h's bp_f32_to_f16/bf16, which take some thirty
 * instructions in software: on an H200 a softmax over a 32000-word
 * vocabulary ran 1.5 times slower in f16 than in f32 with those). */
template <class S> struct bpcu_ft;
template <> struct bpcu_ft<float> {
    typedef float C;
    static __device__ __forceinline__ float ld(float x) { return x; }
    static __device__ __forceinline__ float st(float c) { return c; }
    static __device__ __forceinline__ float std_(double d) { return (float)d; }
};
template <> struct bpcu_ft<double> {
    typedef double C;
    static __device__ __forceinline__ double ld(double x) { return x; }
    static __device__ __forceinline__ double st(double c) { return c; }
    static __device__ __forceinline__ double std_(double d) { return d; }
};
template <> struct bpcu_ft<bpcu_h16> {
    typedef float C;
    static __device__ __forceinline__ float ld(bpcu_h16 x) { return bpcu_h2f(x.v); }
    static __device__ __forceinline__ bpcu_h16 st(float c) { return bpcu_h16{bpcu_f2h(c)}; }
    static __device__ __forceinline__ bpcu_h16 std_(double d) { return bpcu_h16{bpcu_f2h(bp__f64_to_f32_odd(d))}; }
};
template <> struct bpcu_ft<bpcu_b16> {
    typedef float C;
    static __device__ __forceinline__ float ld(bpcu_b16 x) { return bp_bf16_to_f32(x.v); }
    static __device__ __forceinline__ bpcu_b16 st(float c) { return bpcu_b16{bpcu_f2b(c)}; }
    static __device__ __forceinline__ bpcu_b16 std_(double d) { return bpcu_b16{bpcu_f2b(bp__f64_to_f32_odd(d))}; }
};

/* exp in S's compute type: expf for f16/bf16/f32 (the FP64 units of consumer
 * GPUs run at 1/64 of the FP32 rate), exp for f64; the result widened. */
template <class S> static __device__ __forceinline__ double bpcu_exp_c(double d)
{
    if constexpr (std::is_same<typename bpcu_ft<S>::C, float>::value)
        return (double)expf((float)d);
    else
        return exp(d);
}

/* Runs CALL with T the storage type of dt (nothing for another dtype). */
#define BPCU_DISPATCH_FLOAT(dt, CALL)                                                   \
    switch (dt) {                                                                       \
    case BP_F32: { typedef float T; CALL; } break;                                      \
    case BP_F64: { typedef double T; CALL; } break;                                     \
    case BP_F16: { typedef bpcu_h16 T; CALL; } break;                                   \
    case BP_BF16: { typedef bpcu_b16 T; CALL; } break;                                  \
    default: break;                                                                     \
    }
#define BPCU_DISPATCH_INT(dt, CALL)                                                     \
    switch (dt) {                                                                       \
    case BP_U8: { typedef uint8_t T; CALL; } break;                                     \
    case BP_I8: { typedef int8_t T; CALL; } break;                                      \
    case BP_I32: { typedef int32_t T; CALL; } break;                                    \
    case BP_I64: { typedef int64_t T; CALL; } break;                                    \
    default: break;                                                                     \
    }

/* Integers keep the low bits of a 64-bit result (wrapping). */
static __device__ __forceinline__ void bpcu_st_wrap(bp_dtype dt, char *p, uint64_t u)
{
    switch (dt) {
    case BP_BOOL: *(uint8_t *)p = (uint8_t)(u != 0); break;
    case BP_U8: *(uint8_t *)p = (uint8_t)u; break;
    case BP_I8: *(int8_t *)p = (int8_t)(uint8_t)u; break;
    case BP_I32: *(int32_t *)p = (int32_t)(uint32_t)u; break;
    default: *(int64_t *)p = (int64_t)u; break;
    }
}

#endif
