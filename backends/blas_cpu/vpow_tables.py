"""Tables and polynomials of the AVX-512 f32 pow (vpow.c), with their errors.

Run with mpmath installed (pip install mpmath): prints the C initialisers
that vpow.c holds, and the worst relative error of each polynomial (with its
coefficients rounded to double) over its interval. Not part of the build.

log2(a) = k + log2(1 / invc_i) + log2(1 + r), r = z invc_i - 1, where a's
float bits less 0x3f330000 give k (the exponent), i (the next 4 bits) and z
in [0.699, 1.398); invc_i is 1 / c_i, c_i the middle of subinterval i
(1 for the one holding 1, so that near a = 1 nothing cancels).
log2(1 + r) = r Q(r). 2^f for |f| <= 1/32 is 1 + f E(r), and 2^(j/16) is
tabled as bits less j << 48 (adding N << 48 then adds N >> 4 to the
exponent).
"""
import struct

import mpmath as mp

mp.mp.prec = 200
OFF = 0x3f330000
N = 16
LOG_Q_DEGREE = 6
EXP_E_DEGREE = 4


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bits64(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def fit(f, lo, hi, degree):
    """Chebyshev fit of f on [lo, hi]: coefficients, lowest power first"""
    poly = mp.chebyfit(f, [lo, hi], degree + 1)
    return [float(c) for c in poly[::-1]]


def worst_relative(approx, exact, lo, hi, points=4001):
    worst = mp.mpf(0)
    for j in range(points):
        x = mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * j / (points - 1)
        if x != 0:
            worst = max(worst, abs(approx(x) / exact(x) - 1))
    return worst


def horner(coefs, x):
    acc = mp.mpf(0)
    for c in reversed(coefs):
        acc = acc * x + mp.mpf(c)
    return acc


invc, log2c, rmax = [], [], 0.0
for i in range(N):
    lo, last = f32(OFF + i * (1 << 19)), f32(OFF + (i + 1) * (1 << 19) - 1)
    hi = f32(OFF + (i + 1) * (1 << 19))
    # the subinterval holding 1 has invc = 1: log2(a) is then r Q(r) alone
    # near a = 1, without cancelling against log2(1 / invc)
    ic = 1.0 if lo <= 1.0 < hi else float(1 / mp.mpf((lo + hi) / 2))
    invc.append(ic)
    log2c.append(float(-mp.log(mp.mpf(ic), 2)))
    rmax = max(rmax, abs(lo * ic - 1), abs(last * ic - 1))

q = fit(lambda r: mp.log(1 + r, 2) / r if r else 1 / mp.log(2), -rmax, rmax, LOG_Q_DEGREE)
e = fit(lambda f: (mp.mpf(2) ** f - 1) / f if f else mp.log(2), -mp.mpf(1) / 32,
        mp.mpf(1) / 32, EXP_E_DEGREE)
q_err = worst_relative(lambda r: r * horner(q, r), lambda r: mp.log(1 + r, 2), -rmax, rmax)
e_err = worst_relative(lambda f: 1 + f * horner(e, f), lambda f: mp.mpf(2) ** f,
                       -mp.mpf(1) / 32, mp.mpf(1) / 32)
exp2 = [(bits64(float(mp.mpf(2) ** (mp.mpf(j) / 16))) - (j << 48)) % (1 << 64) for j in range(N)]

print(f"|r| < {rmax:.6f}")
print(f"log2(1 + r) = r Q(r), Q of degree {LOG_Q_DEGREE}: relative error 2^{float(mp.log(q_err, 2)):.1f}")
print(f"2^f = 1 + f E(f), E of degree {EXP_E_DEGREE}: relative error 2^{float(mp.log(e_err, 2)):.1f}")
print("pow_invc:", ", ".join(repr(x) for x in invc))
print("pow_log2c:", ", ".join(repr(x) for x in log2c))
print("pow_exp2_bits:", ", ".join(f"0x{x:016x}ull" for x in exp2))
print("Q (lowest power first):", ", ".join(repr(x) for x in q))
print("E (lowest power first):", ", ".join(repr(x) for x in e))
