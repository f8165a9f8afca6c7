"""The custom calls and collectives of HLO modules, in NumPy, for hlo_numpy.py.

Custom calls: JAX's threefry2x32 kernel, the annotation targets that return
their operand on one device (sharding and SPMD shape markers, host-offload
placement, dynamic-shape bounds) and the linear-algebra targets, which
hlo_linalg.py evaluates. Any other target is an error naming the
instruction.

Collectives (all-reduce, all-gather, reduce-scatter, all-to-all,
collective-permute) on one device: each replica group has one member, so
every collective passes its operand on, except collective-permute to a
device no pair targets, which gives zeros. Among more devices the other
members' data is not in the module: an error.
"""

import math

import numpy as np

from hlo_linalg import TARGETS as LINALG_TARGETS, linalg_call
from hlo_semantics import int_list, np_type
from hlo_text_parser import HloError

# Annotations that return their operand on one device; the last two are
# torch-neuronx's transfer hint and backward mark (torch_neuronx's
# TransferWithStaticRing and StartBackward autograd functions pass the
# tensor through them).
IDENTITY_TARGETS = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost",
                    "MoveToDevice", "annotate_device_placement", "SetBound", "LayoutConstraint",
                    "AwsNeuronTransferWithStaticRing", "TorchNeuronStartBackward"}


def group_size(text):
    """Members of the first replica group: {{0,1},{2,3}} -> 2, [2,4]<=[8] -> 4, {} -> None."""
    text = text.replace(" ", "")
    if text.startswith("["):
        return int(text[1:text.index("]")].split(",")[-1])
    inner = text[1:-1]
    if not inner:
        return None
    return len([x for x in inner[1:inner.index("}")].split(",") if x])


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds (Salmon et al., SC'11), elementwise on uint32 arrays."""
    k0, k1, x0, x1 = (np.asarray(v, np.uint32) for v in (k0, k1, x0, x1))
    keys = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    with np.errstate(over="ignore"):
        x = [x0 + keys[0], x1 + keys[1]]
        for block in range(5):
            for r in rotations[block % 2]:
                x[0] = x[0] + x[1]
                x[1] = ((x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r))) ^ x[0]
            x[0] = x[0] + keys[(block + 1) % 3]
            x[1] = x[1] + keys[(block + 2) % 3] + np.uint32(block + 1)
    return x[0].astype(np.uint32), x[1].astype(np.uint32)


def pass_through(op, shape):
    """The operand as the result: a tuple as it is, an array reshaped to `shape`."""
    return op if isinstance(op, tuple) else op.reshape(shape.dims)


def activation(target, x):
    """torch-neuronx's activation targets, in float64, rounded to x's type once."""
    w = x.astype(np.float64)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    if target == "AwsNeuronErf":
        y = erf(w)
    elif target == "AwsNeuronSilu":
        y = w / (1.0 + np.exp(-w))
    elif target == "AwsNeuronGelu":
        y = 0.5 * w * (1.0 + erf(w / math.sqrt(2.0)))
    else:  # AwsNeuronGeluApprxTanh
        y = 0.5 * w * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (w + 0.044715 * w ** 3)))
    return y.astype(x.dtype)


ACTIVATION_TARGETS = {"AwsNeuronGelu", "AwsNeuronGeluApprxTanh", "AwsNeuronErf", "AwsNeuronSilu"}


def rms_norm(inst, ops, where):
    """torch-neuronx's AwsNeuronRmsNorm(x, weight, eps), the dimension in the
    backend_config: x * rsqrt(mean(x^2 over it) + eps) * weight, in float64,
    rounded to x's type once."""
    if len(ops) != 3:
        raise HloError(f"{where}: AwsNeuronRmsNorm takes 3 operands")
    x, weight, eps = ops
    d = int(inst.attrs.get("backend_config", "").strip().strip('"'))
    w = x.astype(np.float64)
    mean = np.mean(w * w, axis=d, keepdims=True)
    view = [1] * x.ndim
    view[d] = -1
    y = w / np.sqrt(mean + float(eps)) * weight.astype(np.float64).reshape(view)
    return y.astype(x.dtype)


def x64(target, ops, shape, where):
    """The TPU compiler's 64-bit helpers: the low or high u32 word of an
    s64/u64/f64 array, and the 64-bit value of two words."""
    if target in ("X64SplitLow", "X64SplitHigh"):
        bits = np.ascontiguousarray(ops[0]).view(np.uint64)
        word = bits if target == "X64SplitLow" else bits >> np.uint64(32)
        return (word & np.uint64(0xFFFFFFFF)).astype(np.uint32).reshape(shape.dims)
    if len(ops) != 2:
        raise HloError(f"{where}: X64Combine takes 2 operands")
    bits = (np.atleast_1d(ops[1]).astype(np.uint64) << np.uint64(32)) | \
        np.atleast_1d(ops[0]).astype(np.uint64)
    return bits.view(np_type(shape.dtype, where)).reshape(shape.dims)


def custom_call(inst, ops, shape, where):
    target = inst.attrs.get("custom_call_target", "").strip().strip('"')
    if "threefry2x32" in target:
        if len(ops) != 4:
            raise HloError(f"{where}: {target} takes 4 operands")
        return tuple(threefry2x32(*ops))
    if target in LINALG_TARGETS:
        return linalg_call(target, ops, shape, inst.attrs, where)
    if target in IDENTITY_TARGETS and len(ops) == 1:
        return pass_through(ops[0], shape)
    if target in ACTIVATION_TARGETS and len(ops) == 1:
        return activation(target, ops[0])
    if target == "AwsNeuronRmsNorm":
        return rms_norm(inst, ops, where)
    if target in ("X64SplitLow", "X64SplitHigh", "X64Combine"):
        return x64(target, ops, shape, where)
    raise HloError(f"{where}: custom-call target '{target}' is not supported by the oracle")


def collective(inst, ops, shape, module, where):
    """One device: each group has one member, so every collective passes its
    operand on, except collective-permute to a device no pair targets (zeros)."""
    members = group_size(inst.attrs.get("replica_groups", "{}"))
    if members is None:
        members = int(module.attrs.get("replica_count", "1")) * int(module.attrs.get("num_partitions", "1"))
    if members != 1:
        raise HloError(f"{where}: {inst.opcode} among {members} devices")
    if inst.opcode == "collective-permute":
        pairs = [int_list(p) for p in inst.attrs.get("source_target_pairs", "{}").strip()[1:-1].split("}") if p.strip(", {")]
        if not any(len(p) == 2 and p[1] == 0 for p in pairs):
            return np.zeros(shape.dims, np_type(shape.dtype, where))
    if len(ops) == 1:
        return pass_through(ops[0], shape)
    return tuple(ops)
