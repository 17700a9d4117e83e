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
    "dtype": "a dtype the library lacks (string, complex)",
    "mode": "a mode or attribute of the op the library does not support (named in the detail)",
    "value": "a model's map value (the library has tensors, and sequences and optionals of them)",
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

def _adam_epsilon_left_out_by_onnx(inputs, expected, actual):
    """ONNX 1.12's test_adam_multiple computed its expected outputs with
    epsilon = 1e-2, but its model leaves the attribute out, so the schema's
    default (1e-6) applies; ONNX's own ReferenceEvaluator gives the library's
    value for the model (later ONNX releases put epsilon on the node). The
    model's other attributes: alpha 0.95, beta 0.85, norm_coefficient 0.001;
    T = 0 (no bias correction). True when, for one of the two updated
    tensors, the expected values are Adam's with 1e-2 and the library's are
    Adam's with 1e-6 (each within 1e-5, relative)."""
    r, t = float(inputs[0]), int(inputs[1])
    xs, gs, vs, hs = inputs[2:4], inputs[4:6], inputs[6:8], inputs[8:10]
    if t != 0:
        return False

    def x_new(x, g, v, h, eps):
        x, g, v, h = (np.asarray(a, dtype=np.float64) for a in (x, g, v, h))
        g_reg = 0.001 * x + g
        v2 = 0.95 * v + 0.05 * g_reg
        h2 = 0.85 * h + 0.15 * g_reg * g_reg
        return x - r * v2 / (np.sqrt(h2) + eps)

    for x, g, v, h in zip(xs, gs, vs, hs):
        if np.shape(x) != np.shape(expected):
            continue
        if (np.allclose(expected, x_new(x, g, v, h, 1e-2), rtol=1e-5, atol=0)
                and np.allclose(actual, x_new(x, g, v, h, 1e-6), rtol=1e-5, atol=0)):
            return True
    return False


KNOWN_DIFFERENCE_ADAM = ("ONNX's expected outputs were computed with epsilon 1e-2, which its "
                         "model leaves out (the schema's default is 1e-6); ONNX's "
                         "ReferenceEvaluator gives the library's value for the model")

def _bernoulli_drawn_by_numpy(inputs, expected, actual):
    """ONNX's Bernoulli tests made their expected values with NumPy's
    generator; the library draws from its keyed Philox stream. True when
    both are 0/1 of p's shape and the library's is 0 where p is 0 and 1
    where p is 1 (what any draw must give)."""
    p = np.asarray(inputs[0], dtype=np.float64)
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    return (a.shape == e.shape == p.shape and np.isin(a, (0, 1)).all()
            and np.isin(e, (0, 1)).all() and (a[p <= 0] == 0).all() and (a[p >= 1] == 1).all())


KNOWN_DIFFERENCE_BERNOULLI = ("ONNX drew the expected values with NumPy's generator; the library "
                              "draws from its keyed Philox stream (checked: 0/1 of p's shape, 0 "
                              "where p = 0, 1 where p = 1)")


def _dropout_mask_drawn_by_numpy(inputs, expected, actual):
    """Training-mode Dropout: ONNX's expected mask came from NumPy's
    generator. True when every output element is what some mask gives: y
    is 0 or x / (1 - ratio) element by element (the mask output: bool)."""
    x = np.asarray(inputs[0], dtype=np.float64)
    ratio = float(np.asarray(inputs[1]).ravel()[0]) if len(inputs) > 1 else 0.5
    a = np.asarray(actual)
    if a.shape != np.shape(expected) or a.shape != x.shape:
        return False
    if a.dtype == np.bool_:
        return np.asarray(expected).dtype == np.bool_
    kept = np.isclose(a, x / (1 - ratio), rtol=1e-6, atol=0)
    return bool(((a == 0) | kept).all())


KNOWN_DIFFERENCE_DROPOUT = ("ONNX drew the expected mask with NumPy's generator; the library "
                            "draws it from bp_dropout's keyed Philox stream (checked: every "
                            "element is 0 or x / (1 - ratio); the mask is bool)")

# test name -> (why, check(input host arrays, expected host array, actual host
# array) -> whether the difference is exactly the explained one).
KNOWN_DIFFERENCES = {
    "test_cast_FLOAT_to_BFLOAT16": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
    "test_castlike_FLOAT_to_BFLOAT16": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
    "test_castlike_FLOAT_to_BFLOAT16_expanded": (KNOWN_DIFFERENCE_BF16, _bf16_truncated_by_onnx),
    "test_adam_multiple": (KNOWN_DIFFERENCE_ADAM, _adam_epsilon_left_out_by_onnx),
}
for _name in ("test_bernoulli", "test_bernoulli_double", "test_bernoulli_seed"):
    KNOWN_DIFFERENCES[_name] = (KNOWN_DIFFERENCE_BERNOULLI, _bernoulli_drawn_by_numpy)
    KNOWN_DIFFERENCES[f"node/{_name}_expanded"] = (KNOWN_DIFFERENCE_BERNOULLI,
                                                   _bernoulli_drawn_by_numpy)
for _name in ("test_training_dropout", "test_training_dropout_default",
              "test_training_dropout_default_mask", "test_training_dropout_mask"):
    KNOWN_DIFFERENCES[_name] = (KNOWN_DIFFERENCE_DROPOUT, _dropout_mask_drawn_by_numpy)
