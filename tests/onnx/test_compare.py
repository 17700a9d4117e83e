#!/usr/bin/env python3
"""ctest onnx.compare: the runner's comparison and its known-difference check,
against hand-made values (NumPy only; no ONNX, no library).

usage: test_compare.py   (exit 77: NumPy is missing)
"""
import os
import sys
import unittest

try:
    import numpy as np
except ImportError:
    print("SKIPPED: NumPy is not importable by " + sys.executable)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare  # noqa: E402
from hostvalues import f32_to_bf16_bits  # noqa: E402
from scope import KNOWN_DIFFERENCES, REASONS, OutOfScope  # noqa: E402


def f32(*v):
    return np.array(v, dtype=np.float32)


class FloatTolerance(unittest.TestCase):
    def test_a_value_2e_3_off_fails(self):
        v = compare("f32", f32(1.0), "f32", f32(1.002))
        self.assertFalse(v.ok)
        self.assertAlmostEqual(v.error, 0.002, places=6)
        self.assertIn("max |diff| 0.002", v.detail)

    def test_a_value_within_rtol_passes(self):
        self.assertTrue(compare("f32", f32(1000.0), "f32", f32(1000.9)).ok)

    def test_atol_holds_near_zero(self):
        self.assertTrue(compare("f32", f32(0.0), "f32", f32(9e-6)).ok)
        self.assertFalse(compare("f32", f32(0.0), "f32", f32(2e-5)).ok)

    def test_nan_equals_nan(self):
        self.assertTrue(compare("f64", np.array([np.nan, 1.0]), "f64", np.array([np.nan, 1.0])).ok)

    def test_nan_against_a_number_fails_both_ways(self):
        self.assertFalse(compare("f32", f32(np.nan), "f32", f32(1.0)).ok)
        v = compare("f32", f32(1.0), "f32", f32(np.nan))
        self.assertFalse(v.ok)
        self.assertEqual(v.error, float("inf"))

    def test_an_infinity_must_be_the_same_infinity(self):
        self.assertTrue(compare("f32", f32(np.inf, -np.inf), "f32", f32(np.inf, -np.inf)).ok)
        self.assertFalse(compare("f32", f32(np.inf), "f32", f32(-np.inf)).ok)
        self.assertFalse(compare("f32", f32(np.inf), "f32", f32(3e38)).ok)
        self.assertFalse(compare("f32", f32(3e38), "f32", f32(np.inf)).ok)

    def test_the_largest_error_is_reported(self):
        v = compare("f32", f32(1, 2, 3, 4), "f32", f32(1.1, 2, 3.5, 4.2))
        self.assertFalse(v.ok)
        self.assertIn("at [2]", v.detail)
        self.assertIn("3 of 4", v.detail)

    def test_bf16_one_ulp_above_one_fails(self):
        one, next_up = f32_to_bf16_bits(f32(1.0)), f32_to_bf16_bits(f32(1.0078125))
        self.assertTrue(compare("bf16", one, "bf16", one).ok)
        self.assertFalse(compare("bf16", one, "bf16", next_up).ok)

    def test_f16_is_compared_as_its_values(self):
        e = np.array([1.0, 65504.0], dtype=np.float16)
        self.assertTrue(compare("f16", e, "f16", e.copy()).ok)
        self.assertFalse(compare("f16", e, "f16", np.array([1.0, np.inf], dtype=np.float16)).ok)


class ExactDtypes(unittest.TestCase):
    def test_integer_off_by_one_fails(self):
        v = compare("i32", np.array([5, 6], np.int32), "i32", np.array([5, 7], np.int32))
        self.assertFalse(v.ok)
        self.assertEqual(v.error, 1.0)

    def test_equal_integers_pass(self):
        a = np.array([-(2**63), 2**63 - 1], np.int64)
        self.assertTrue(compare("i64", a, "i64", a.copy()).ok)

    def test_int64_extremes_differ_without_overflow(self):
        v = compare("i64", np.array([2**63 - 1], np.int64), "i64", np.array([-(2**63)], np.int64))
        self.assertFalse(v.ok)
        self.assertIn(str(2**64 - 1), v.detail)

    def test_no_tolerance_for_large_integers(self):
        big = 2**53
        v = compare("i64", np.array([big], np.int64), "i64", np.array([big + 1], np.int64))
        self.assertFalse(v.ok)

    def test_bool_mismatch_fails(self):
        self.assertFalse(compare("bool", np.array([True]), "bool", np.array([False])).ok)
        self.assertTrue(compare("bool", np.array([True]), "bool", np.array([True])).ok)


class DtypeAndShape(unittest.TestCase):
    def test_another_dtype_fails_even_with_equal_values(self):
        v = compare("f32", f32(1.0), "f64", np.array([1.0]))
        self.assertFalse(v.ok)
        self.assertIn("dtype f64, expected f32", v.detail)

    def test_a_broadcastable_shape_is_not_the_shape(self):
        v = compare("f32", np.array(1.0, np.float32), "f32", f32(1.0))
        self.assertFalse(v.ok)
        self.assertIn("shape [1], expected []", v.detail)

    def test_empty_outputs_of_the_right_shape_pass(self):
        z = np.zeros((0, 3), np.float32)
        self.assertTrue(compare("f32", z, "f32", z.copy()).ok)
        self.assertFalse(compare("f32", z, "f32", np.zeros((3, 0), np.float32)).ok)


class Scope(unittest.TestCase):
    def test_reasons_are_a_fixed_vocabulary(self):
        self.assertEqual(set(REASONS), {"op", "dtype", "mode", "value"})
        with self.assertRaises(AssertionError):
            OutOfScope("flaky", "not a reason")

    def test_bf16_truncation_is_recognised_only_when_exact(self):
        _, check = KNOWN_DIFFERENCES["test_cast_FLOAT_to_BFLOAT16"]
        x = f32(1.00390625 + 2**-9, 3.0, np.inf)  # the first one rounds up, truncates down
        truncated, rounded = f32_to_bf16_bits(x, truncate=True), f32_to_bf16_bits(x)
        self.assertFalse(np.array_equal(truncated, rounded))
        self.assertTrue(check([x], truncated, rounded))
        wrong = rounded.copy()
        wrong[1] += 1
        self.assertFalse(check([x], truncated, wrong))
        self.assertFalse(check([x], rounded, rounded))  # ONNX's side must be the truncation

    def test_round_to_nearest_even_on_a_tie(self):
        # 1 + 2^-8 lies halfway between two bf16 values: the even one is 1.0.
        self.assertEqual(int(f32_to_bf16_bits(f32(1.0 + 2**-8))[0]), 0x3F80)
        self.assertEqual(int(f32_to_bf16_bits(f32(1.0 + 3 * 2**-8))[0]), 0x3F82)


if __name__ == "__main__":
    unittest.main(verbosity=2)
