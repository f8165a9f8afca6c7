"""libpva's Python object model over tileprof reports.

A script written for Graphcore's PopVision analysis library runs with

    import tileprof.pva as pva
    report = pva.openReport("Trace_Event_Report.json")

as its only change. Where a tileprof report has no such data, the attribute
raises AttributeError saying what is missing; it never returns a made-up value.
docs/python.md lists what maps to what.
"""

import tileprof
from tileprof import ReportError

__all__ = ["openReport", "ProgramVisitor", "ReportError"]


def _missing(owner, name, why):
    raise AttributeError(f"{owner}.{name}: {why}")


class _Lazy:
    """Fields computed on first use (94,208 tiles: build only what is read)."""

    def __getattr__(self, name):
        maker = getattr(type(self), "_make_" + name, None)
        if maker is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        value = maker(self)
        setattr(self, name, value)
        return value


class Version:
    def __init__(self, text):
        self.string = text
        parts = (text.split(" ")[-1].split(".") + ["0", "0", "0"])[:3]
        self.major, self.minor, self.point = (int(p) if p.isdigit() else 0 for p in parts)
        self.isUnstableFormat = False

    def __repr__(self):
        return self.string


class Target:
    class Type:
        """libpva's pva.Target.Type; tileprof models IPU hardware."""
        Ipu = "Ipu"
        IpuModel = "IpuModel"
        Cpu = "Cpu"
        Unknown = "Unknown"

    def __init__(self, t):
        self.type = Target.Type.Ipu
        self.architecture = t.arch
        self.numIPUs = t.num_ipus
        self.tilesPerIpu = t.tiles_per_ipu
        self.numTiles = t.total_tiles
        self.bytesPerTile = t.bytes_per_tile
        self.bytesPerIPU = t.bytes_per_tile * t.tiles_per_ipu
        self.totalMemory = t.total_memory
        self.clockFrequency = t.clock_hz
        # Without replica lines the graph was compiled for one replica: all of it.
        rep = t.replication
        self.numReplicas = rep["num_replicas"] if rep else 1
        self.ipusPerReplica = rep["ipus_per_replica"] if rep else t.num_ipus
        self.tilesPerReplica = rep["tiles_per_replica"] if rep else t.total_tiles
        self.memoryPerReplica = rep["memory_per_replica"] if rep else t.total_memory


class Graph:
    def __init__(self, g):
        self.numVertices = g.num_vertices
        self.numEdges = g.num_edges
        self.numVariables = g.num_variables
        self.numComputeSets = g.num_compute_sets


class MemorySize:
    """Bytes with and without the gaps between allocations."""

    __slots__ = ("includingGaps", "excludingGaps")

    def __init__(self, including, excluding):
        self.includingGaps = including
        self.excludingGaps = excluding


class CategoryUsage:
    """One category's bytes on a tile, as `.total.excludingGaps`. tileprof
    reports carry them excluding gaps only and not split by region, so the
    one object serves as the category and as its total."""

    __slots__ = ("excludingGaps",)

    def __init__(self, excluding):
        self.excludingGaps = excluding

    @property
    def total(self):
        return self

    # Missing members are answered here, not by properties: a property that
    # raises AttributeError would fall through to __getattr__ and lose its text.
    def __getattr__(self, name):
        if name == "includingGaps":
            _missing("category.total", name,
                     "tileprof reports give category bytes excluding gaps only")
        if name in ("nonInterleaved", "interleaved", "overflowed"):
            _missing("category", name, "tileprof reports do not split categories by region")
        raise AttributeError(name)


class Categories:
    """tile.memory.category.<libpva name> (tileprof.CATEGORIES)."""

    def __init__(self, row):
        self._row = row

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in tileprof.CATEGORIES:
            _missing("memory.category", name,
                     "not a category tileprof reports; known: " + ", ".join(tileprof.CATEGORIES))
        return CategoryUsage(int(self._row[tileprof.CATEGORIES.index(name)]))


class TileMemory:
    __slots__ = ("_tiles", "_i")

    def __init__(self, tiles, i):
        self._tiles = tiles
        self._i = i

    @property
    def total(self):
        t = self._tiles
        return MemorySize(t.including[self._i], t.excluding[self._i])

    @property
    def alwaysLiveBytes(self):
        return self._tiles.always_live[self._i]

    @property
    def notAlwaysLiveBytes(self):
        return self._tiles.not_always_live[self._i]

    @property
    def overflowed(self):
        t = self._tiles
        return MemorySize(t.overflow_including[self._i], t.overflow_excluding[self._i])

    @property
    def nonInterleaved(self):
        return self._region("Non-interleaved")

    @property
    def interleaved(self):
        return self._region("Interleaved")

    def _region(self, label):
        arrays = self._tiles.arrays
        return MemorySize(int(arrays.region(label, "including_gaps")[self._i]),
                          int(arrays.region(label, "excluding_gaps")[self._i]))

    @property
    def category(self):
        return Categories(self._tiles.arrays.categories[self._i])

    @property
    def vertices(self):
        _missing("tile.memory", "vertices",
                 "tileprof reports give vertex-data bytes per type, not the vertices of a tile")


class _TileColumns:
    """The per-tile arrays as Python lists, converted once for fast indexing."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.including = arrays.including_gaps.tolist()
        self.excluding = arrays.excluding_gaps.tolist()
        self.always_live = arrays.always_live.tolist()
        self.not_always_live = arrays.not_always_live.tolist()
        self.overflow_including = arrays.region("Overflowed", "including_gaps").tolist()
        self.overflow_excluding = arrays.region("Overflowed", "excluding_gaps").tolist()


class Tile:
    __slots__ = ("number", "memory", "_tiles_per_ipu")

    def __init__(self, number, memory, tiles_per_ipu):
        self.number = number
        self.memory = memory
        self._tiles_per_ipu = tiles_per_ipu

    @property
    def ipu(self):
        return self.number // self._tiles_per_ipu if self._tiles_per_ipu else 0


class Ipu:
    def __init__(self, id, tiles):
        self.id = id
        self.tiles = tiles


class VertexType:
    def __init__(self, name):
        self.name = name


class Vertex:
    __slots__ = ("type",)

    def __init__(self, vertex_type):
        self.type = vertex_type


class _Vertices:
    """A compute set's vertices: tileprof reports count them per type, so each
    vertex has a type and nothing else."""

    def __init__(self, counts):
        self._counts = counts  # [(VertexType, count)]

    def __len__(self):
        return sum(n for _, n in self._counts)

    def __iter__(self):
        for vertex_type, n in self._counts:
            for _ in range(n):
                yield Vertex(vertex_type)


class ComputeSet:
    def __init__(self, name, counts):
        self.name = name
        self.vertices = _Vertices(counts)


# tileprof program kinds -> libpva program types (and visitor methods).
_PVA_TYPES = {"Execute": "OnTileExecute"}


class Program:
    class Type:
        """libpva's pva.Program.Type, compared with `program.type`: its values
        are the type names. tileprof's own kinds (Copy, CopyFromStream,
        CopyToStream) keep their names."""
        Unknown = "Unknown"
        Sequence = "Sequence"
        OnTileExecute = "OnTileExecute"
        Repeat = "Repeat"
        RepeatWhileTrue = "RepeatWhileTrue"
        RepeatWhileFalse = "RepeatWhileFalse"
        If = "If"
        Switch = "Switch"
        Call = "Call"
        Sync = "Sync"
        DoExchange = "DoExchange"
        GlobalExchange = "GlobalExchange"
        StreamCopyBegin = "StreamCopyBegin"
        StreamCopyMid = "StreamCopyMid"
        StreamCopyEnd = "StreamCopyEnd"
        Copy = "Copy"
        CopyFromStream = "CopyFromStream"
        CopyToStream = "CopyToStream"

    def __init__(self, name, kind, computeset=None):
        self.name = name
        self.type = _PVA_TYPES.get(kind, kind)
        self.children = []
        if computeset is not None:
            self.computeset = computeset

    def accept(self, visitor):
        getattr(visitor, "visit" + self.type, visitor.visitProgram)(self)

    def __repr__(self):
        return f"Program({self.name!r}, {self.type})"


class Variable:
    """A variable: `name`, `size` in bytes (over all tiles)."""

    __slots__ = ("name", "size")

    def __init__(self, name, size):
        self.name = name
        self.size = size

    def __repr__(self):
        return f"Variable({self.name!r}, {self.size})"


class LiveMemory:
    """`bytes` live during a step over all tiles, and `variables`: the
    not-always-live variables and receive buffers behind them, largest first."""

    __slots__ = ("bytes", "_report", "_step")

    def __init__(self, count, report, step):
        self.bytes = count
        self._report = report
        self._step = step

    @property
    def variables(self):
        if not self._report.not_always_live_variables and self.bytes:
            _missing("notAlwaysLiveMemory", "variables",
                     f"this {self._report.format} report has no not-always-live variable list "
                     "(a file written before tileprof recorded it)")
        return [Variable(v["name"], v["bytes"]) for v in self._report.live_at(self._step)]


class LivenessStep:
    """One step of the schedule: `program`, `notAlwaysLiveMemory.bytes` (over
    all tiles)."""

    __slots__ = ("program", "notAlwaysLiveMemory")

    def __init__(self, program, not_always_live, report, step):
        self.program = program
        self.notAlwaysLiveMemory = LiveMemory(not_always_live, report, step)

    def notAlwaysLiveMemoryForTile(self, tile):
        _missing("livenessProgramStep", "notAlwaysLiveMemoryForTile",
                 "tileprof reports give each step's live bytes over all tiles, not per tile")

    def notAlwaysLiveMemoryForIpu(self, ipu):
        _missing("livenessProgramStep", "notAlwaysLiveMemoryForIpu",
                 "tileprof reports give each step's live bytes over all tiles, not per IPU")


class ProgramVisitor:
    """Subclass and define visit<Type> methods (visitOnTileExecute,
    visitSequence, visitRepeat, visitIf, visitCopy, ...); others fall back to
    visitProgram, which does nothing."""

    def visitProgram(self, program):
        pass


class Compilation(_Lazy):
    def __init__(self, report):
        self._report = report

    def _make_target(self):
        if self._report.target is None:
            _missing("compilation", "target", "the report (a text excerpt) names no target")
        return Target(self._report.target)

    def _make_graph(self):
        if self._report.graph is None:
            _missing("compilation", "graph", "the report (a text excerpt) has no graph figures")
        return Graph(self._report.graph)

    def _make_tiles(self):
        if not self._report.has_tiles:
            _missing("compilation", "tiles",
                     f"a {self._report.format} report has no per-tile data (use JSON, CBOR or SQLite)")
        columns = _TileColumns(self._report.tiles)
        tiles_per_ipu = self._report.target.tiles_per_ipu if self._report.target else 0
        return [Tile(number, TileMemory(columns, i), tiles_per_ipu)
                for i, number in enumerate(self._report.tiles.tile.tolist())]

    def _make_ipus(self):
        tiles = self.tiles
        per_ipu = self.target.tilesPerIpu
        return [Ipu(k, tiles[k * per_ipu:(k + 1) * per_ipu]) for k in range(self.target.numIPUs)]

    def _make_computeSets(self):
        types = {}
        sets = []
        for cs in self._report.compute_sets:
            counts = [(types.setdefault(name, VertexType(name)), n) for name, n in cs["vertices"]]
            sets.append(ComputeSet(cs["name"], counts))
        return sets

    def _make_programs(self):
        sets = self.computeSets
        raw = self._report.programs
        programs = [Program(p["name"], p["kind"],
                            sets[p["compute_set"]] if p["compute_set"] is not None else None)
                    for p in raw]
        for program, p in zip(programs, raw):
            program.children = [programs[c] for c in p["children"]]
        return programs

    def _make_alwaysLiveVariables(self):
        variables = self._report.always_live_variables
        if not variables:
            _missing("compilation", "alwaysLiveVariables",
                     f"this {self._report.format} report has no always-live list "
                     "(a text report, or a file written before tileprof recorded it)")
        return [Variable(v["name"], v["bytes"]) for v in variables]

    def _make_livenessProgramSteps(self):
        liveness = self._report.liveness
        if len(liveness["program"]) == 0:
            _missing("compilation", "livenessProgramSteps",
                     f"this {self._report.format} report has no liveness per program step "
                     "(a text report, or a file written before tileprof recorded it)")
        programs = self.programs
        return [LivenessStep(programs[p], b, self._report, i) for i, (p, b) in
                enumerate(zip(liveness["program"].tolist(), liveness["not_always_live"].tolist()))]


class StepIpu:
    __slots__ = ("cycles",)

    def __init__(self, cycles):
        self.cycles = cycles


class Step:
    def __init__(self, program, ipus):
        self.program = program
        self.ipus = ipus


class Execution(_Lazy):
    def __init__(self, report, compilation):
        self._report = report
        self._compilation = compilation

    def _make_steps(self):
        execution = self._report.execution
        if execution is None:
            return []
        by_name = {}
        if self._report.programs:
            for program in self._compilation.programs:
                by_name.setdefault(program.name, program)
        num_ipus = self._report.target.num_ipus if self._report.target else 1
        steps = []
        for s in execution["steps"]:
            program = by_name.get(s["program"]) or Program(s["program"], "Unknown")
            # Every tile syncs at the end of a step, so it takes as long on
            # each IPU: the step's cycles.
            ipus = [StepIpu(s["cycles"]) for _ in range(num_ipus)]
            steps.append(Step(program, ipus))
        return steps

    def _make_runs(self):
        _missing("execution", "runs", "tileprof reports record one run's steps, not runs")


class Report(_Lazy):
    def __init__(self, report):
        self._report = report
        self.version = Version(".".join(str(v) for v in tileprof._tileprof.FORMAT_VERSION))
        self.poplarVersion = Version("tileprof " + tileprof.__version__)

    def _make_compilation(self):
        return Compilation(self._report)

    def _make_execution(self):
        # As libpva's for a profile without execution data (a compile-only
        # run, or a model that does not fit): no steps.
        return Execution(self._report, self.compilation)


def openReport(path):
    """Opens a tileprof report (text, JSON, CBOR or SQLite) as libpva would a profile.pop."""
    return Report(tileprof.open_report(path))
