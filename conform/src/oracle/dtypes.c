/* The dtype sets the op tests and the case table loop over, element sizes,
 * and integer edge values. */
#include "oracle.h"
#include "independent.h"

const bp_dtype cf_all_dtypes[13] = {BP_BOOL, BP_U8,  BP_I8,  BP_I32, BP_I64, BP_F16, BP_BF16,
                                    BP_F32,  BP_F64, BP_I16, BP_U16, BP_U32, BP_U64};
const bp_dtype cf_numeric_dtypes[12] = {BP_U8,  BP_I8,  BP_I32, BP_I64, BP_F16, BP_BF16,
                                        BP_F32, BP_F64, BP_I16, BP_U16, BP_U32, BP_U64};
const bp_dtype cf_float_dtypes[4] = {BP_F16, BP_BF16, BP_F32, BP_F64};
const bp_dtype cf_int_dtypes[8] = {BP_U8, BP_I8, BP_I32, BP_I64, BP_I16, BP_U16, BP_U32, BP_U64};

size_t cf_dtype_size(bp_dtype dt)
{
    switch (dt) {
    case BP_BOOL: case BP_U8: case BP_I8: return 1;
    case BP_F16: case BP_BF16: case BP_I16: case BP_U16: return 2;
    case BP_I32: case BP_F32: case BP_U32: return 4;
    case BP_I64: case BP_U64: case BP_F64: return 8;
    default: return 0;
    }
}

bool cf_is_float(bp_dtype dt)
{
    return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64;
}

int64_t cf_int_edges(bp_dtype dt, const int64_t *mid, size_t n_mid, int64_t *v)
{
    int64_t lo = cf_int_min(dt), hi = cf_int_max(dt), n = 0;
    for (size_t i = 0; i < n_mid + 4; i++) {
        int64_t c = i == 0 ? lo : i == 1 ? lo + 1 : i < n_mid + 2 ? mid[i - 2]
                  : i == n_mid + 2 ? hi - 1 : hi;
        if (c < lo || c > hi)
            continue;
        bool dup = false;
        for (int64_t j = 0; j < n; j++)
            dup = dup || v[j] == c;
        if (!dup)
            v[n++] = c;
    }
    return n;
}
