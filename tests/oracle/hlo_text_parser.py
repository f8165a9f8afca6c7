"""A small parser of HLO text, independent of tileprof's C++ parser.

It accepts the three print styles of ../../shared/spec/hlo-text.md section 1:
optional `%`, optional operand shapes, optional program shapes, `/*...*/` and
`//` comments, instructions wrapped over several lines. Attributes are kept
as raw text and interpreted by the evaluator (hlo_numpy.py) when it needs
them. Errors raise HloError with the file and line.
"""

import re


class HloError(Exception):
    pass


class Shape:
    def __init__(self, dtype=None, dims=(), elements=None):
        self.dtype = dtype
        self.dims = tuple(dims)
        self.elements = elements  # list of Shape for tuples

    def is_tuple(self):
        return self.elements is not None

    def __repr__(self):
        if self.is_tuple():
            return "(" + ", ".join(repr(e) for e in self.elements) + ")"
        return f"{self.dtype}[{','.join(map(str, self.dims))}]"

    def leaves(self):
        if not self.is_tuple():
            return [self]
        out = []
        for e in self.elements:
            out.extend(e.leaves())
        return out


class Instruction:
    def __init__(self, name, shape, opcode, operand_text, attrs, line, is_root):
        self.name = name
        self.shape = shape
        self.opcode = opcode
        self.operand_text = operand_text  # raw text between the parentheses
        self.operands = []  # names (filled unless the opcode takes a literal)
        self.attrs = attrs  # dict name -> raw text
        self.line = line
        self.is_root = is_root


class Computation:
    def __init__(self, name, is_entry, line):
        self.name = name
        self.is_entry = is_entry
        self.line = line
        self.instructions = []
        self.by_name = {}
        self.root = None
        self.params = {}  # number -> Instruction


class Module:
    def __init__(self, name):
        self.name = name
        self.attrs = {}
        self.computations = {}
        self.entry = None
        self.aliases = []  # (output index tuple, parameter number, parameter index tuple)


def strip_comments(text):
    """Blanks out comments (keeping newlines, so line numbers survive)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise HloError(f"line {text.count(chr(10), 0, i) + 1}: unterminated /* comment")
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j + 2]))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


NAME_RE = re.compile(r"%?([A-Za-z_][\w.\-]*)")
ARRAY_SHAPE_RE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^}]*\})?")


class Cursor:
    def __init__(self, text, path):
        self.text = text
        self.pos = 0
        self.path = path

    def line(self, pos=None):
        return self.text.count("\n", 0, self.pos if pos is None else pos) + 1

    def error(self, message, pos=None):
        return HloError(f"{self.path}:{self.line(pos)}: {message}")

    def ws(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s):
        self.ws()
        return self.text.startswith(s, self.pos)

    def expect(self, s):
        if not self.peek(s):
            got = self.text[self.pos:self.pos + 20].split("\n")[0]
            raise self.error(f"expected '{s}', got '{got}'")
        self.pos += len(s)

    def name(self):
        self.ws()
        m = NAME_RE.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected a name, got '{self.text[self.pos:self.pos + 20]}'")
        self.pos = m.end()
        return m.group(1)

    def balanced(self, stop_at_space=True):
        """Reads a value up to a depth-0 ',' (or whitespace), honouring brackets and strings."""
        self.ws()
        start = self.pos
        depth = 0
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c in "\"'":
                j = self.pos + 1
                while j < len(t) and t[j] != c:
                    j += 2 if t[j] == "\\" else 1
                self.pos = j + 1
                continue
            if c in "({[":
                depth += 1
            elif c in ")}]":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (c == "," or (stop_at_space and c.isspace())):
                break
            self.pos += 1
        if depth != 0:
            raise self.error("unbalanced brackets", start)
        return t[start:self.pos].strip()

    def group(self, open_c, close_c):
        """Reads a bracketed group and returns its inside text."""
        self.expect(open_c)
        start = self.pos
        depth = 1
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c in "\"'":
                j = self.pos + 1
                while j < len(t) and t[j] != c:
                    j += 2 if t[j] == "\\" else 1
                self.pos = j + 1
                continue
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return t[start:self.pos - 1]
            self.pos += 1
        raise self.error(f"unterminated '{open_c}'", start)

    def shape(self):
        self.ws()
        if self.peek("("):
            self.expect("(")
            elements = []
            if not self.peek(")"):
                while True:
                    elements.append(self.shape())
                    if self.peek(","):
                        self.expect(",")
                        continue
                    break
            self.expect(")")
            return Shape(elements=elements)
        m = ARRAY_SHAPE_RE.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected a shape, got '{self.text[self.pos:self.pos + 20]}'")
        self.pos = m.end()
        return array_shape(m.group(1), m.group(2), self)


UNBOUNDED = -1  # a '?' dimension


def array_shape(dtype, dims_text, cursor):
    # New narrow float types appear every year (f8e4m3fn, f4e2m1fn...): any
    # lower-case word before '[' is a type; the evaluator refuses the ones it
    # cannot compute with.
    dims = []
    for d in dims_text.split(","):
        d = d.strip()
        if not d:
            continue
        d = d.lstrip("<=")
        if d == "?":
            # Unbounded: parsed, so that a module whose other computations
            # use it still runs; evaluating such an instruction is an error.
            dims.append(UNBOUNDED)
            continue
        if not d.isdigit():
            raise cursor.error(f"dimension '{d}' is not a number")
        dims.append(int(d))
    return Shape(dtype, dims)


def parse_shape_text(text, path="<shape>"):
    c = Cursor(text, path)
    s = c.shape()
    return s


def split_top(text):
    """Splits at depth-0 commas."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    tail = text[start:]
    if tail.strip() or parts:
        parts.append(tail)
    return [p.strip() for p in parts]


LITERAL_OPCODES = {"constant", "parameter"}


def parse_instruction(c, comp):
    c.ws()
    start = c.pos
    is_root = False
    if c.text.startswith("ROOT", c.pos) and not re.match(r"[\w.\-]", c.text[c.pos + 4:c.pos + 5]):
        is_root = True
        c.pos += 4
    name = c.name()
    line = c.line(start)
    c.expect("=")
    shape = c.shape()
    c.ws()
    m = re.compile(r"[a-z][a-z0-9\-]*").match(c.text, c.pos)
    if not m:
        raise c.error(f"instruction '{name}': expected an opcode")
    opcode = m.group(0)
    c.pos = m.end()
    operand_text = c.group("(", ")")
    attrs = {}
    while c.peek(","):
        c.expect(",")
        c.ws()
        m = re.compile(r"([A-Za-z_][\w\-]*)\s*=").match(c.text, c.pos)
        if not m:
            raise c.error(f"instruction '{name}': expected attribute name")
        c.pos = m.end()
        value = c.balanced()
        # A literal attribute (custom-call's `literal=s32[] 1`) is a shape,
        # a space, then the value on the same line.
        rest = re.compile(r"[ \t]+(?=[^,\s)])").match(c.text, c.pos)
        if ARRAY_SHAPE_RE.fullmatch(value) and rest:
            c.pos = rest.end()
            value += " " + c.balanced()
        attrs[m.group(1)] = value
    inst = Instruction(name, shape, opcode, operand_text, attrs, line, is_root)
    if opcode not in LITERAL_OPCODES:
        for operand in split_top(operand_text):
            tokens = operand.split()
            if not tokens:
                raise c.error(f"instruction '{name}': empty operand")
            m = NAME_RE.fullmatch(tokens[-1])
            if not m:
                raise c.error(f"instruction '{name}': bad operand '{operand}'")
            inst.operands.append(m.group(1))
    return inst


def parse_computation(c, module):
    c.ws()
    start = c.pos
    is_entry = False
    if c.text.startswith("ENTRY", c.pos) and c.text[c.pos + 5].isspace():
        is_entry = True
        c.pos += 5
    name = c.name()
    comp = Computation(name, is_entry, c.line(start))
    if c.peek("("):
        c.group("(", ")")
        c.expect("->")
        c.shape()
    c.expect("{")
    while not c.peek("}"):
        if c.pos >= len(c.text):
            raise c.error(f"computation '{name}': missing '}}'", start)
        inst = parse_instruction(c, comp)
        if inst.name in comp.by_name:
            raise c.error(f"computation '{name}': duplicate instruction name '{inst.name}'")
        comp.instructions.append(inst)
        comp.by_name[inst.name] = inst
        if inst.is_root:
            if comp.root is not None:
                raise c.error(f"computation '{name}': more than one ROOT")
            comp.root = inst
        if inst.opcode == "parameter":
            try:
                number = int(inst.operand_text.strip())
            except ValueError:
                raise c.error(f"instruction '{inst.name}': parameter number '{inst.operand_text}'")
            comp.params[number] = inst
    c.expect("}")
    if c.peek(","):  # , execution_thread="..."
        c.expect(",")
        c.name()
        c.expect("=")
        c.balanced()
    if not comp.instructions:
        raise c.error(f"computation '{name}' is empty", start)
    if comp.root is None:
        comp.root = comp.instructions[-1]
    for inst in comp.instructions:
        for op in inst.operands:
            if op not in comp.by_name:
                raise HloError(f"{c.path}:{inst.line}: instruction '{inst.name}': unknown operand '{op}'")
    return comp


ALIAS_RE = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}")


def index_tuple(text):
    return tuple(int(x) for x in text.replace(" ", "").split(",") if x)


def parse_module(text, path="<module>"):
    c = Cursor(strip_comments(text), path)
    c.expect("HloModule")
    name = c.name()
    if c.peek(":"):
        c.expect(":")
    module = Module(name)
    while c.peek(","):
        c.expect(",")
        c.ws()
        m = re.compile(r"([A-Za-z_][\w\-]*)\s*=").match(c.text, c.pos)
        if not m:
            raise c.error("expected a module attribute")
        c.pos = m.end()
        module.attrs[m.group(1)] = c.balanced()
    alias = module.attrs.get("input_output_alias")
    if alias:
        for out, param, pidx in ALIAS_RE.findall(alias):
            module.aliases.append((index_tuple(out), int(param), index_tuple(pidx)))
    last = None
    while True:
        c.ws()
        if c.pos >= len(c.text):
            break
        m = re.compile(r"(FileNames|FunctionNames|FileLocations|StackFrames)\b").match(c.text, c.pos)
        if m:  # stack frame tables: `N "str"` or `N {...}` entries
            c.pos = m.end()
            while True:
                c.ws()
                e = re.compile(r"\d+\s*").match(c.text, c.pos)
                if not e:
                    break
                c.pos = e.end()
                if c.peek("{"):
                    c.group("{", "}")
                else:
                    c.balanced()
            continue
        comp = parse_computation(c, module)
        if comp.name in module.computations:
            raise c.error(f"duplicate computation '{comp.name}'")
        module.computations[comp.name] = comp
        if comp.is_entry:
            module.entry = comp
        last = comp
    if last is None:
        raise HloError(f"{path}: no computations")
    if module.entry is None:
        module.entry = last
    return module
