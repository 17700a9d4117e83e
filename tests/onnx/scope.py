"""What a test can end in, and the fixed vocabulary of reasons a test is out of
scope. run.py prints both tables; nothing here is decided anywhere else.

Every single-node test ends in exactly one outcome:
  PASS              the library ran the node and every output matched
  FAIL              the library ran it (or refused it) and an output did not
                    match: the detail gives the largest error or the refusal
  OUT OF SCOPE      not run, for one of REASONS
  KNOWN DIFFERENCE  run; the library's output differs from ONNX's expected
                    value exactly as explained in KNOWN_DIFFERENCES (checked,
                    not assumed: any other difference is a FAIL)
"""
import numpy as np

from hostvalues import f32_to_bf16_bits

PASS, FAIL, OUT_OF_SCOPE, KNOWN_DIFFERENCE = "PASS", "FAIL", "OUT OF SCOPE", "KNOWN DIFFERENCE"
OUTCOMES = (PASS, FAIL, OUT_OF_SCOPE, KNOWN_DIFFERENCE)

# The only reasons a test may be out of scope ("value": model tests only).
REASONS = {
    "op": "the op does not exist in the library",
    "dtype": "a dtype the library lacks (string, complex, int16, uint16/32/64)",
    "mode": "a mode or attribute of the op the library does not support (named in the detail)",
    "value": "a model's sequence, optional or map value (the library has tensors only)",
}


class OutOfScope(Exception):
    def __init__(self, reason, detail):
        assert reason in REASONS, reason
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def missing_op(detail):
    return OutOfScope("op", detail)


def missing_dtype(detail):
    return OutOfScope("dtype", detail)


def unsupported(detail):
    """A mode or attribute value the library has no parameter for."""
    return OutOfScope("mode", detail)


def _bf16_truncated_by_onnx(inputs, expected, actual):
    """ONNX 1.12's Cast test cases make FLOAT -> BFLOAT16 by dropping the low
    16 bits (onnx/backend/test/case/node/cast.py); the library rounds to
    nearest even, like onnxruntime, PyTorch and ml_dtypes. True when the
    expected bits are exactly the truncated input and the library's are
    exactly the rounded input."""
    x = np.asarray(inputs[0], dtype=np.float32)
    return (np.array_equal(expected, f32_to_bf16_bits(x, truncate=True))
            and np.array_equal(actual, f32_to_bf16_bits(x)))


KNOWN_DIFFERENCE_BF16 = ("ONNX made the expected bf16 values by truncating float32 (dropping "
                         "the low 16 bits); the library rounds to nearest even, as onnxruntime, "
                         "PyTorch and ml_dtypes do")

# test name -> (why, check(input host arrays, expected host array, actual host
# array) -> whether the difference is exactly the explained one).
KNOWN_DIFFERENCES = {
    "test_cast_FLOAT_to_BFLOAT16": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
    "test_castlike_FLOAT_to_BFLOAT16": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
    "test_castlike_FLOAT_to_BFLOAT16_expanded": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
}
