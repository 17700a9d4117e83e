"""ONNX element types against the library's dtypes, and ONNX tensors read as
host values (hostvalues.py: NumPy arrays in the library dtype's storage type).
"""
import numpy as np
from onnx import TensorProto, numpy_helper


# The library's dtypes: short name -> NumPy storage dtype (bf16 is carried as
# its 16 bits: NumPy has no bf16).
STORAGE = {"bool": np.bool_, "u8": np.uint8, "i8": np.int8, "i32": np.int32, "i64": np.int64,
           "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
           "i16": np.int16, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
# short name <-> backplane's (NumPy's) name
NUMPY_NAME = {"bool": "bool", "u8": "uint8", "i8": "int8", "i32": "int32", "i64": "int64",
              "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
              "i16": "int16", "u16": "uint16", "u32": "uint32", "u64": "uint64"}
SHORT_NAME = {v: k for k, v in NUMPY_NAME.items()}

# ONNX TensorProto.DataType -> the library's dtype name (dtypes.STORAGE).
ONNX_TO_BP = {
    TensorProto.BOOL: "bool",
    TensorProto.UINT8: "u8",
    TensorProto.INT8: "i8",
    TensorProto.INT32: "i32",
    TensorProto.INT64: "i64",
    TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16",
    TensorProto.FLOAT: "f32",
    TensorProto.DOUBLE: "f64",
    TensorProto.INT16: "i16",
    TensorProto.UINT16: "u16",
    TensorProto.UINT32: "u32",
    TensorProto.UINT64: "u64",
}
BP_TO_ONNX = {v: k for k, v in ONNX_TO_BP.items()}


def onnx_name(elem_type):
    """'FLOAT', 'STRING', 'UINT16'... as ONNX spells them."""
    return TensorProto.DataType.Name(elem_type)


def bp_dtype(elem_type):
    """The library's dtype for an ONNX element type, or None if it has none."""
    return ONNX_TO_BP.get(elem_type)


def decode(tensor, elem_type):
    """A TensorProto as (library dtype, host array). elem_type is the type the
    graph declares, one the library has (the caller checked). ONNX 1.12 stores
    its bf16 test data as UINT16 tensors of the bit patterns."""
    dtype = ONNX_TO_BP[elem_type]
    dims = tuple(tensor.dims)
    if dtype == "bf16" and tensor.data_type == TensorProto.UINT16:
        return dtype, numpy_helper.to_array(tensor).astype(np.uint16).reshape(dims)
    if tensor.data_type != elem_type:
        raise ValueError(f"{tensor.name}: data of type {onnx_name(tensor.data_type)} for a "
                         f"{onnx_name(elem_type)} value")
    if dtype == "bf16":
        if tensor.HasField("raw_data"):
            bits = np.frombuffer(tensor.raw_data, dtype="<u2")
        else:  # int32_data holds one bf16 pattern per entry
            bits = np.asarray(tensor.int32_data, dtype=np.uint32).astype(np.uint16)
        return dtype, bits.reshape(dims).copy()
    arr = numpy_helper.to_array(tensor)
    return dtype, np.array(arr, dtype=STORAGE[dtype]).reshape(dims)
