"""Element types, attribute payloads, literals and elementwise semantics of HLO.

The scalar rules of the XLA operation reference that NumPy does not follow by
itself: integer division and remainder by zero and of INT_MIN by -1,
shifts by the bit width or more, float-to-integer conversion (truncation,
saturation, NaN to 0), bf16 rounding. Used by hlo_numpy.py.
"""

import re

import math

import numpy as np

from hlo_text_parser import HloError

NP_TYPES = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
}


# How float sums (dot, convolution, reduce and scatter with an add reducer,
# batch norm, the linear-algebra custom calls) are computed: "wide" (the
# default) in float64 and rounded once, closer to the exact value than any
# f32 implementation; "native" in the type XLA:CPU accumulates in (float32
# for f16, bf16 and f32; float64 for f64). A native evaluation is a second
# IEEE evaluation of the module at its own precision: how far it lands from
# the wide one measures how much the module's results depend on f32 rounding
# (compare.py --rounding-reference).
SUMS = {"mode": "wide"}


def sum_type(dtype):
    """The NumPy type a float sum of `dtype` elements is computed in."""
    if SUMS["mode"] == "wide" or np.dtype(dtype) == np.float64:
        return np.float64
    return np.float32


def np_type(dtype, where):
    if dtype not in NP_TYPES:
        raise HloError(f"{where}: element type {dtype} is not supported by the oracle")
    return NP_TYPES[dtype]


def round_bf16(a):
    """Rounds float32 values to bfloat16 precision (nearest even), kept as float32.

    The constants are typed: with a 0-d array (a scalar instruction) NumPy's
    value-based casting would make uint64 >> int a float64 operation, which
    has no right shift."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    lsb = (bits >> np.uint64(16)) & np.uint64(1)
    rounded = ((bits + np.uint64(0x7FFF) + lsb) & np.uint64(0xFFFF0000)).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out).astype(np.float32)


def round_bf16_once(a):
    """Rounds values (float64 too) to bfloat16 precision in one step, nearest
    even, kept as float32: round_bf16(a.astype(float32)) could round twice (a
    float64 sum just above a bfloat16 tie can land on it in float32). bfloat16
    keeps 8 significant bits; below 2**-126 its spacing is fixed at 2**-133."""
    a = np.asarray(a, np.float64)
    _, e = np.frexp(a)
    q = np.maximum(e - 8, -133)
    with np.errstate(over="ignore"):  # past the bfloat16 range: infinity
        return np.ldexp(np.round(np.ldexp(a, -q)), q).astype(np.float32)  # np.round: half to even


def is_float(a):
    return np.issubdtype(a.dtype, np.floating)


# --- attribute helpers -------------------------------------------------------

def int_list(text):
    text = text.strip().strip("{}")
    return [int(x) for x in text.replace(" ", "").split(",") if x]


def parse_window(text):
    """window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}"""
    fields = {}
    for part in text.strip().strip("{}").split():
        key, _, value = part.partition("=")
        fields[key] = value
    size = [int(x) for x in fields["size"].split("x")] if "size" in fields else []
    rank = len(size)

    def dims(key, default):
        if key not in fields:
            return [default] * rank
        return [int(x) for x in fields[key].split("x")]
    pads = [(0, 0)] * rank
    if "pad" in fields:
        pads = [tuple(int(v) for v in p.split("_")) for p in fields["pad"].split("x")]
    return {"size": size, "stride": dims("stride", 1), "pad": pads, "lhs_dilate": dims("lhs_dilate", 1),
            "rhs_dilate": dims("rhs_dilate", 1), "rhs_reversal": dims("rhs_reversal", 0)}


def parse_padding(text):
    out = []
    for p in text.split("x"):
        v = [int(x) for x in p.split("_")]
        out.append((v[0], v[1], v[2] if len(v) > 2 else 0))
    return out


def parse_slice(text):
    out = []
    for m in re.finditer(r"\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(\d+))?\s*\]", text):
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)))
    return out


LITERAL_TOKEN = re.compile(r"-?inf|-?nan(?:\(0x[0-9a-fA-F]+\))?|true|false|[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?")


def parse_literal(text, shape, where):
    text = text.strip()
    if "..." in text:
        raise HloError(f"{where}: the constant's value is elided ({{...}}); the oracle needs the values")
    if shape.is_tuple():
        raise HloError(f"{where}: tuple constants are not supported by the oracle")
    tokens = LITERAL_TOKEN.findall(text)
    count = int(np.prod(shape.dims)) if shape.dims else 1
    if len(tokens) != count:
        raise HloError(f"{where}: constant has {len(tokens)} values, shape {shape} needs {count}")
    dt = np_type(shape.dtype, where)
    values = []
    for t in tokens:
        if t == "true":
            values.append(1)
        elif t == "false":
            values.append(0)
        elif "nan" in t:
            values.append(float("nan"))
        elif "inf" in t:
            values.append(float(t))
        elif np.issubdtype(dt, np.integer) or dt == np.bool_:
            values.append(int(t))
        else:
            values.append(float(t))
    if np.issubdtype(dt, np.integer):
        arr = np.array([int(v) for v in values], dtype=object).astype(dt)
    else:
        arr = np.array(values, dtype=np.float64).astype(dt)
    return arr.reshape(shape.dims)


# --- elementwise semantics ---------------------------------------------------

def int_info(dt):
    return np.iinfo(dt)


def xla_divide(a, b):
    if is_float(a):
        return np.divide(a, b)
    a, b = np.broadcast_arrays(a, b)
    dt = a.dtype
    out = np.zeros(a.shape, dt)
    zero = b == 0
    safe_b = np.where(zero, 1, b).astype(dt)
    if np.issubdtype(dt, np.signedinteger):
        info = int_info(dt)
        overflow = (a == info.min) & (b == -1)
        safe_b = np.where(overflow, 1, safe_b).astype(dt)
        q = np.abs(a.astype(np.int64)) // np.abs(safe_b.astype(np.int64))
        q = np.where((a < 0) != (safe_b < 0), -q, q)
        out = q.astype(dt)
        out = np.where(overflow, a, out)
        out = np.where(zero, np.array(-1, dt), out)
    else:
        out = (a // safe_b).astype(dt)
        out = np.where(zero, np.array(int_info(dt).max, dt), out)
    return out.astype(dt)


def xla_remainder(a, b):
    if is_float(a):
        return np.fmod(a, b)
    a, b = np.broadcast_arrays(a, b)
    dt = a.dtype
    zero = b == 0
    safe_b = np.where(zero, 1, b).astype(dt)
    if np.issubdtype(dt, np.signedinteger):
        overflow = (a == int_info(dt).min) & (b == -1)
        safe_b = np.where(overflow, 1, safe_b).astype(dt)
        r = np.fmod(a.astype(np.int64), safe_b.astype(np.int64)).astype(dt)
        r = np.where(overflow, np.array(0, dt), r)
    else:
        r = (a % safe_b).astype(dt)
    return np.where(zero, a, r).astype(dt)


def shift(a, b, kind):
    dt = a.dtype
    bits = dt.itemsize * 8
    unsigned = np.dtype(f"u{dt.itemsize}")
    ua = a.view(unsigned) if a.ndim else np.asarray(a).reshape(1).view(unsigned).reshape(())
    ub = np.asarray(b).astype(unsigned)
    big = ub >= bits
    amount = np.where(big, 0, ub).astype(unsigned)
    if kind == "left":
        out = np.where(big, 0, ua << amount).astype(unsigned)
        return out.view(dt) if out.ndim else out.reshape(1).view(dt).reshape(())
    if kind == "logical":
        out = np.where(big, 0, ua >> amount).astype(unsigned)
        return out.view(dt) if out.ndim else out.reshape(1).view(dt).reshape(())
    signed = np.dtype(f"i{dt.itemsize}")
    sa = a.view(signed) if a.ndim else np.asarray(a).reshape(1).view(signed).reshape(())
    out = np.where(big, np.where(sa < 0, -1, 0), sa >> amount.astype(signed)).astype(signed)
    return out.view(dt) if out.ndim else out.reshape(1).view(dt).reshape(())


def round_afz(a):
    """Rounds half away from zero. a - trunc(a) is exact, where a + 0.5 is not:
    it rounds 0.49999997 (f32) or 0.4998 (f16) up to 1, which then floors to 1."""
    t = np.trunc(a)
    return np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t).astype(a.dtype)


def erf(a):
    """The error function, elementwise, through math.erf in float64."""
    return np.vectorize(math.erf, otypes=[np.float64])(a.astype(np.float64)).astype(a.dtype)


UNARY = {
    "negate": lambda a: np.negative(a),
    "abs": np.abs,
    "exponential": np.exp,
    "exponential-minus-one": np.expm1,
    "log": np.log,
    "log-plus-one": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: (1 / np.sqrt(a)).astype(a.dtype),
    "cbrt": np.cbrt,
    "tanh": np.tanh,
    "tan": np.tan,
    "erf": erf,
    "logistic": lambda a: (1 / (1 + np.exp(-a))).astype(a.dtype),
    "floor": np.floor,
    "ceil": np.ceil,
    "round-nearest-afz": round_afz,
    "round-nearest-even": np.rint,
    "sign": np.sign,
    "cosine": np.cos,
    "sine": np.sin,
    "is-finite": np.isfinite,
    "not": lambda a: np.logical_not(a) if a.dtype == np.bool_ else np.invert(a),
    "copy": lambda a: a.copy(),
    "popcnt": lambda a: np.array([bin(int(v) & ((1 << (a.dtype.itemsize * 8)) - 1)).count("1")
                                  for v in a.reshape(-1)], a.dtype).reshape(a.shape),
    "count-leading-zeros": lambda a: np.array(
        [a.dtype.itemsize * 8 - (int(v) & ((1 << (a.dtype.itemsize * 8)) - 1)).bit_length()
         for v in a.reshape(-1)], a.dtype).reshape(a.shape),
    "optimization-barrier": lambda a: a,
}

BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": xla_divide,
    "remainder": xla_remainder,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": lambda a, b: np.power(a, b) if is_float(a) else int_power(a, b),
    "atan2": np.arctan2,
    "and": lambda a, b: np.logical_and(a, b) if a.dtype == np.bool_ else np.bitwise_and(a, b),
    "or": lambda a, b: np.logical_or(a, b) if a.dtype == np.bool_ else np.bitwise_or(a, b),
    "xor": lambda a, b: np.logical_xor(a, b) if a.dtype == np.bool_ else np.bitwise_xor(a, b),
    "shift-left": lambda a, b: shift(a, b, "left"),
    "shift-right-logical": lambda a, b: shift(a, b, "logical"),
    "shift-right-arithmetic": lambda a, b: shift(a, b, "arithmetic"),
}


def int_power(a, b):
    a, b = np.broadcast_arrays(a, b)
    out = np.power(a, np.maximum(b, 0))
    # XLA: negative exponents give 0 except for bases 1 and -1.
    neg = b < 0
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(neg, special, out).astype(a.dtype)


COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
           "GT": np.greater, "GE": np.greater_equal}


def convert(a, dtype):
    dt = NP_TYPES[dtype]
    if dt == np.bool_:
        return a != 0
    if np.issubdtype(dt, np.integer) and is_float(a):
        info = int_info(dt)
        x = np.trunc(a.astype(np.float64))
        x = np.where(np.isnan(x), 0, x)
        x = np.clip(x, info.min, info.max)
        return x.astype(dt)
    out = a.astype(dt)
    return round_bf16(out) if dtype == "bf16" else out
