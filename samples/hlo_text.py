"""A tiny writer of HLO text in the legacy long style of TF-2.6-era dumps.

The sample generators (samples/mnist/gen_mnist.py, samples/cnn/gen_cnn.py,
samples/resnet50/gen_resnet50.py) build their modules with it. It only
formats text: shapes are given by the caller, who knows them; nothing here
infers or checks semantics. The style matches what Graphcore's TensorFlow
printed with HloPrintOptions() of that era, and what JAX's dumps of 2022
print too (../shared/corpus/hlo has some): `%` names, operand shapes before
each operand, program shapes on computation headers, layouts on every array
of rank >= 1 and `/*index=N*/` before every fifth tuple element and operand.

Standard library only, so the generators run with any python3.
"""


class Shape:
    """An array shape (dtype, dims) or a tuple of shapes (dtype None)."""

    def __init__(self, dtype, dims=(), elements=None):
        self.dtype = dtype
        self.dims = tuple(dims)
        self.elements = list(elements) if elements is not None else None

    @staticmethod
    def tuple_of(shapes):
        return Shape(None, (), shapes)

    def is_tuple(self):
        return self.elements is not None

    def text(self, layout=True):
        if self.is_tuple():
            parts = []
            for i, element in enumerate(self.elements):
                prefix = f"/*index={i}*/" if i and i % 5 == 0 else ""
                parts.append(prefix + element.text(layout))
            return "(" + ", ".join(parts) + ")"
        dims = ",".join(str(d) for d in self.dims)
        text = f"{self.dtype}[{dims}]"
        if layout and self.dims:
            text += "{" + ",".join(str(d) for d in reversed(range(len(self.dims)))) + "}"
        return text


def f32(*dims):
    return Shape("f32", dims)


def s32(*dims):
    return Shape("s32", dims)


def pred(*dims):
    return Shape("pred", dims)


def u32(*dims):
    return Shape("u32", dims)


def f16(*dims):
    return Shape("f16", dims)


def bf16(*dims):
    return Shape("bf16", dims)


def window(size, stride=None, pad=None, lhs_dilate=None, rhs_dilate=None):
    """The `window={...}` attribute of convolution, reduce-window and
    select-and-scatter as XLA prints it: one entry per window dimension,
    fields in XLA's order (size, stride, pad, lhs_dilate, rhs_dilate), a field
    left out when every dimension has its default (stride 1, pad 0_0,
    dilation 1). `pad` is a list of (low, high) pairs; negative values crop."""
    def joined(values):
        return "x".join(str(v) for v in values)
    fields = [f"size={joined(size)}"]
    if stride is not None and any(s != 1 for s in stride):
        fields.append(f"stride={joined(stride)}")
    if pad is not None and any(p != (0, 0) for p in map(tuple, pad)):
        fields.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pad))
    if lhs_dilate is not None and any(d != 1 for d in lhs_dilate):
        fields.append(f"lhs_dilate={joined(lhs_dilate)}")
    if rhs_dilate is not None and any(d != 1 for d in rhs_dilate):
        fields.append(f"rhs_dilate={joined(rhs_dilate)}")
    return "window={" + " ".join(fields) + "}"


class Value:
    """One instruction's result: its name and shape."""

    def __init__(self, name, shape):
        self.name = name
        self.shape = shape

    def operand_text(self):
        return f"{self.shape.text()} %{self.name}"


class Metadata:
    """TF-style op metadata; `scope` prefixes op_name like a name scope.

    With source_file None the metadata has no source_file/source_line (a
    generated model with no source script to point at)."""

    def __init__(self, source_file):
        self.source_file = source_file

    def format(self, op_type, op_name, line):
        parts = []
        if op_type:
            parts.append(f'op_type="{op_type}"')
        parts.append(f'op_name="{op_name}"')
        if self.source_file is not None:
            parts.append(f'source_file="{self.source_file}"')
            parts.append(f"source_line={line}")
        return "metadata={" + " ".join(parts) + "}"


class Computation:
    def __init__(self, module, name, entry=False):
        self.module = module
        self.name = name
        self.entry = entry
        self.params = []
        self.lines = []
        self.root = None
        self.meta = None  # (op_type, op_name, line) applied to the next ops

    def parameter(self, shape, name=None):
        number = len(self.params)
        if name is None:
            name = f"Arg_{number}.{self.module.next_id()}"
        value = Value(name, shape)
        self.params.append(value)
        self._emit(value, f"parameter({number})", [])
        return value

    def at(self, op_type, op_name, line):
        """Sets the metadata of the instructions emitted next."""
        self.meta = (op_type, op_name, line)
        return self

    def no_metadata(self):
        self.meta = None
        return self

    def op(self, opcode, shape, operands, attrs=(), name=None):
        if name is None:
            name = f"{opcode}.{self.module.next_id()}"
        value = Value(name, shape)
        parts = []
        for i, operand in enumerate(operands):
            prefix = f"/*index={i}*/" if i and i % 5 == 0 else ""
            parts.append(prefix + operand.operand_text())
        self._emit(value, f"{opcode}(" + ", ".join(parts) + ")", list(attrs))
        return value

    def constant(self, shape, literal):
        name = f"constant.{self.module.next_id()}"
        value = Value(name, shape)
        self._emit(value, f"constant({literal})", [])
        return value

    def _emit(self, value, call, attrs):
        if self.meta is not None and self.module.metadata is not None:
            attrs = attrs + [self.module.metadata.format(*self.meta)]
        tail = "".join(", " + a for a in attrs)
        self.lines.append((value, f"%{value.name} = {value.shape.text()} {call}{tail}"))

    def set_root(self, value):
        self.root = value

    def text(self):
        params = ", ".join(f"{p.name}: {p.shape.text(layout=False)}" for p in self.params)
        root = self.root if self.root is not None else self.lines[-1][0]
        header = f"{'ENTRY ' if self.entry else ''}%{self.name} ({params}) -> {root.shape.text(layout=False)} {{"
        body = []
        for value, line in self.lines:
            body.append(("  ROOT " if value is root else "  ") + line)
        return "\n".join([header] + body + ["}"])

    # Shorthands for the ops the samples use.
    def binary(self, opcode, a, b):
        return self.op(opcode, a.shape, [a, b])

    def unary(self, opcode, a):
        return self.op(opcode, a.shape, [a])

    def broadcast(self, a, shape, dims):
        return self.op("broadcast", shape, [a], [f"dimensions={{{','.join(map(str, dims))}}}"])

    def scalar(self, dtype, literal):
        return self.constant(Shape(dtype), literal)

    def splat(self, dtype, literal, dims):
        """A scalar constant broadcast to dims (how TF splats its constants)."""
        return self.broadcast(self.scalar(dtype, literal), Shape(dtype, dims), [])

    def reshape(self, a, shape):
        return self.op("reshape", shape, [a])

    def compare(self, a, b, direction):
        return self.op("compare", Shape("pred", a.shape.dims), [a, b], [f"direction={direction}"])

    def select(self, p, a, b):
        return self.op("select", a.shape, [p, a, b])

    def convert(self, a, dtype):
        return self.op("convert", Shape(dtype, a.shape.dims), [a])

    def dot(self, a, b, shape, lhs_contracting, rhs_contracting):
        return self.op("dot", shape, [a, b], [f"lhs_contracting_dims={{{lhs_contracting}}}",
                                               f"rhs_contracting_dims={{{rhs_contracting}}}"])

    def reduce(self, a, init, dims, to_apply):
        kept = [d for i, d in enumerate(a.shape.dims) if i not in dims]
        return self.op("reduce", Shape(a.shape.dtype, kept), [a, init],
                       [f"dimensions={{{','.join(map(str, dims))}}}", f"to_apply=%{to_apply.name}"])

    def convolution(self, lhs, rhs, shape, window_attr, dim_labels, feature_group_count=1):
        """`window_attr` is the text of hlo_text.window(...)."""
        attrs = [window_attr, f"dim_labels={dim_labels}"]
        if feature_group_count != 1:
            attrs.append(f"feature_group_count={feature_group_count}")
        return self.op("convolution", shape, [lhs, rhs], attrs)

    def reduce_window(self, a, init, shape, window_attr, to_apply):
        return self.op("reduce-window", shape, [a, init], [window_attr, f"to_apply=%{to_apply.name}"])

    def select_and_scatter(self, operand, source, init, window_attr, select, scatter):
        return self.op("select-and-scatter", operand.shape, [operand, source, init],
                       [window_attr, f"select=%{select.name}", f"scatter=%{scatter.name}"])

    def tuple(self, values):
        return self.op("tuple", Shape.tuple_of([v.shape for v in values]), values)

    def gte(self, t, index):
        return self.op("get-tuple-element", t.shape.elements[index], [t], [f"index={index}"])


class Module:
    def __init__(self, name, metadata=None):
        self.name = name
        self.metadata = metadata
        self.computations = []
        self.header_attrs = []
        self._id = 0

    def next_id(self):
        self._id += 1
        return self._id

    def computation(self, name, entry=False):
        comp = Computation(self, f"{name}.{self.next_id()}" if not entry else name, entry)
        self.computations.append(comp)
        return comp

    def scalar_binary(self, name, opcode, dtype="f32"):
        """The two-parameter reducer computations (add, max) TF emits per use."""
        comp = self.computation(name)
        a = comp.parameter(Shape(dtype))
        b = comp.parameter(Shape(dtype))
        comp.set_root(comp.op(opcode, Shape(dtype), [a, b]))
        return comp

    def scalar_compare(self, name, direction, dtype="f32"):
        comp = self.computation(name)
        a = comp.parameter(Shape(dtype))
        b = comp.parameter(Shape(dtype))
        comp.set_root(comp.op("compare", Shape("pred"), [a, b], [f"direction={direction}"]))
        return comp

    def alias(self, pairs):
        """input_output_alias: pairs of (output index, parameter number)."""
        entries = ", ".join(f"{{{out}}}: ({param}, {{}}, may-alias)" for out, param in pairs)
        self.header_attrs.append(f"input_output_alias={{ {entries} }}")

    def text(self, banner=()):
        header = f"HloModule {self.name}" + "".join(", " + a for a in self.header_attrs)
        out = [header, ""]
        for line in banner:
            out.append(f"// {line}" if line else "//")
        if banner:
            out.append("")
        # Callees first, ENTRY last, as XLA's post-order printer does.
        ordered = [c for c in self.computations if not c.entry] + [c for c in self.computations if c.entry]
        for comp in ordered:
            out.append(comp.text())
            out.append("")
        return "\n".join(out)
