"""Linear algebra: MatMul, Gemm, Einsum."""
from registry import maps
from scope import unsupported


@maps("MatMul")
def matmul(n):
    return [n.call("matmul", n.tensor(0), n.tensor(1))]


@maps("Gemm")
def gemm(n):
    return [n.call("gemm", n.tensor(0), n.tensor(1), n.tensor(2), float(n.attr("alpha")),
                   float(n.attr("beta")), bool(n.attr("transA")), bool(n.attr("transB")))]


def einsum_limits(equation, n_operands):
    """What bp_einsum documents that it refuses (ops.h): ellipses, an index
    repeated within one operand (a diagonal), more than two operands. None if
    the equation is within its scope."""
    lhs = equation.replace(" ", "").split("->")[0]
    if "..." in equation:
        return "an ellipsis ('...')"
    if n_operands > 2:
        return f"{n_operands} operands"
    for term in lhs.split(","):
        if len(set(term)) != len(term):
            return f"a repeated index within one operand ('{term}', a diagonal)"
    return None


@maps("Einsum")
def einsum(n):
    equation = n.attr("equation")
    xs = n.tensors()
    why = einsum_limits(equation, len(xs))
    if why:
        raise unsupported(f"Einsum equation '{equation}' with {why} (bp_einsum: transposes, "
                          f"sums and one batched matmul)")
    return [n.call("einsum", equation, len(xs), xs)]
