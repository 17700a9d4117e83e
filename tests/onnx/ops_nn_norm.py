"""Normalisation, losses and dropout (nn.h): BatchNormalization (inference
form), InstanceNormalization, LayerNormalization, NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss, Dropout."""
import numpy as np
from onnx import TensorProto

from bplib import LOSS_REDUCTION
from registry import maps
from scope import unsupported


@maps("BatchNormalization")
def batch_norm(n):
    # training_mode (opset 14 on; before, a training node is one that asks for
    # the running mean and variance) computes the batch's statistics and
    # updates running ones: bp_batch_norm is the inference form.
    training = n.attr("training_mode", 0) if n.opset >= 14 else any(
        n.wants(k) for k in range(1, n.n_outputs))
    if training:
        raise unsupported("BatchNormalization in training mode (the batch's statistics and the "
                          "running mean and variance as outputs): bp_batch_norm is the inference "
                          "form, with mean and var given")
    if n.opset < 9 and not n.attr("spatial", 1):
        raise unsupported("BatchNormalization spatial=0 (statistics per element): bp_batch_norm "
                          "normalises per channel")
    dtypes = {n.dtype(i) for i in range(5)}
    if len(dtypes) > 1:
        raise unsupported(f"BatchNormalization with operands of several dtypes "
                          f"({', '.join(sorted(dtypes))}): bp_batch_norm's share x's")
    return [n.call("batch_norm", *[n.tensor(i) for i in range(5)], float(n.attr("epsilon")))]


@maps("InstanceNormalization")
def instance_norm(n):
    return [n.call("instance_norm", n.tensor(0), n.tensor(1), n.tensor(2),
                   float(n.attr("epsilon")))]


@maps("LayerNormalization")
def layer_norm(n):
    # stash_type: the type of the computation and of Mean and InvStdDev. The
    # library's is float32 for f16 and bf16 x, else x's (nn.h): ONNX's default
    # stash_type 1 (FLOAT) for every float x but f64.
    stash = n.attr("stash_type", TensorProto.FLOAT)
    if stash != TensorProto.FLOAT or n.dtype(0) == "f64":
        raise unsupported(f"LayerNormalization stash_type {TensorProto.DataType.Name(stash)} "
                          f"for {n.dtype(0)} x (bp_layer_norm computes in float32 for f16 and "
                          f"bf16, else in x's dtype)")
    y, mean, inv_std = n.call("layer_norm", n.tensor(0), n.attr("axis"), n.tensor(1),
                              n.tensor(2), float(n.attr("epsilon")), n.wants(1), n.wants(2))
    return [y, mean, inv_std]


def _loss_args(n):
    """reduction and ignore_index for bp_nll_loss and its softmax form."""
    reduction = n.attr("reduction")
    if reduction not in LOSS_REDUCTION:
        raise unsupported(f"{n.op_type} reduction '{reduction}' (bp_loss_reduction: none, sum, "
                          f"mean)")
    ignore = [n.attr("ignore_index")] if n.has_attr("ignore_index") else None
    return LOSS_REDUCTION[reduction], ignore


@maps("NegativeLogLikelihoodLoss")
def nll_loss(n):
    reduction, ignore = _loss_args(n)
    return [n.call("nll_loss", n.tensor(0), n.tensor(1), n.tensor(2), reduction, ignore)]


@maps("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(n):
    reduction, ignore = _loss_args(n)
    loss, log_prob = n.call("softmax_cross_entropy_loss", n.tensor(0), n.tensor(1), n.tensor(2),
                            reduction, ignore, n.wants(1))
    return [loss, log_prob]


def _scalar(n, i, default):
    v = n.value(i)
    return default if v is None else np.asarray(v).ravel()[0].item()


@maps("Dropout")
def dropout(n):
    if n.opset < 10 and n.wants(1):
        raise unsupported(f"Dropout-{n.opset}'s mask of x's dtype (bp_dropout's mask is bool, "
                          f"as from Dropout-10 on)")
    if n.opset >= 12:  # ratio and training_mode are inputs
        ratio, training = float(_scalar(n, 1, 0.5)), bool(_scalar(n, 2, False))
    else:  # an attribute; no training mode (Dropout-7 on is inference only)
        ratio, training = float(n.attr("ratio", 0.5)), False
    if training and ratio != 0:
        # With ratio 0 every element is kept whatever is drawn, so that case
        # runs (and checks the scaling by 1 / (1 - 0) and the all-true mask).
        raise unsupported(f"Dropout training_mode=1 with ratio {ratio:g}: ONNX's expected "
                          f"mask comes from NumPy's generator (np.random, seed "
                          f"{n.attr('seed', 0)}); bp_dropout draws it from its Philox stream "
                          f"(bp_random_uniform), so the elements kept differ by design")
    seed = int(n.attr("seed", 0)) % 2**64  # with ratio 0 (or inference) nothing depends on it
    out, mask = n.call("dropout", n.tensor(0), ratio, training, seed, 0, n.wants(1))
    return [out, mask]
