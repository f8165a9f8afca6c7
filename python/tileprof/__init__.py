"""Read tileprof reports from Python.

    import tileprof
    report = tileprof.open_report("Trace_Event_Report.json")   # text, JSON, CBOR or SQLite
    report.target.total_tiles, report.tiles.excluding_gaps.max()
    report.hist()                                              # what `tileprof hist --format=json` prints

Per-tile figures are NumPy arrays (`report.tiles`); everything else is plain
Python objects. `tileprof.pva` is libpva's object model over the same data.
docs/python.md describes both.
"""

import functools
import json

from . import _tileprof
from ._tileprof import CATEGORIES, CATEGORY_LABELS, ReportError

__version__ = _tileprof.__version__
__all__ = ["open_report", "Report", "ReportError", "CATEGORIES", "CATEGORY_LABELS"]


class _Record:
    """Attributes from a dict; repr lists them."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__


class Target(_Record):
    """arch, num_ipus, tiles_per_ipu, total_tiles, bytes_per_tile, total_memory, clock_hz,
    sizes_rounded, replication ({"num_replicas", "ipus_per_replica", "tiles_per_replica",
    "memory_per_replica"}, or None when the report prints no replica lines)."""


class Graph(_Record):
    """num_vertices, num_edges, num_variables, num_compute_sets."""


class TileArrays:
    """Per-tile figures, one NumPy uint64 array each, in tile order.

    tile, excluding_gaps, including_gaps, always_live, not_always_live;
    categories: a (tiles x len(CATEGORIES)) matrix of bytes excluding gaps;
    region(label, gaps): one region's bytes ("Non-interleaved", "Interleaved",
    "Overflowed"; gaps "excluding_gaps" or "including_gaps").
    """

    def __init__(self, native):
        arrays = native.tile_arrays()
        self.tile = arrays["tile"]
        self.excluding_gaps = arrays["excluding_gaps"]
        self.including_gaps = arrays["including_gaps"]
        self.always_live = arrays["always_live"]
        self.not_always_live = arrays["not_always_live"]
        self._regions = {k: v for k, v in arrays.items() if " " in k}
        self._native = native
        self._categories = None

    def __len__(self):
        return len(self.tile)

    @property
    def categories(self):
        if self._categories is None:
            self._categories = self._native.category_matrix()
        return self._categories

    def category(self, name):
        """Bytes of one category (a CATEGORIES machine name) on every tile."""
        return self.categories[:, CATEGORIES.index(name)]

    def region(self, label, gaps="excluding_gaps"):
        key = f"{label} {gaps}"
        if key not in self._regions:
            raise KeyError(f"no region {label!r} with {gaps!r}; regions: Non-interleaved, "
                           "Interleaved, Overflowed")
        return self._regions[key]


class Report:
    """A report read by tileprof.open_report."""

    def __init__(self, native):
        self._native = native
        self.path = native.path
        self.format = native.format
        target = native.target
        graph = native.graph
        self.target = Target(target) if target is not None else None
        self.graph = Graph(graph) if graph is not None else None
        self.vertex_types = native.vertex_types

    @property
    def has_tiles(self):
        """False for a text report, which prints totals and a few tiles only."""
        return self._native.has_tiles

    @functools.cached_property
    def tiles(self):
        return TileArrays(self._native)

    def tile_vertex_types(self, index):
        """[(vertex type name, bytes)] of the tile at `index` in tile order."""
        return [(self.vertex_types[t], b) for t, b in self._native.tile_vertex_types(index)]

    @functools.cached_property
    def compute_sets(self):
        """[{"name", "vertices": [(vertex type name, count)]}]."""
        return [
            {"name": cs["name"], "vertices": [(self.vertex_types[t], n) for t, n in cs["vertices"]]}
            for cs in self._native.compute_sets()
        ]

    @functools.cached_property
    def programs(self):
        """[{"name", "kind", "children": [index], "compute_set": index or None}]."""
        return self._native.programs()

    @functools.cached_property
    def variables(self):
        return self._native.variables()

    @functools.cached_property
    def liveness(self):
        """The schedule's steps in order: {"program": uint32 array (indexes
        `programs`), "not_always_live": uint64 array (bytes live during the
        step, over all tiles), "fullest_tile" and "fullest_tile_bytes" (the
        tile holding the most then, and those bytes; None in a file written
        before format 1.1), "by_ipu" (an (IPUs, steps) uint64 array of each
        IPU's share for a report of more than one IPU, else None)}; empty
        arrays for a text report or an older file."""
        return self._native.liveness()

    @functools.cached_property
    def always_live_variables(self):
        """[{"name", "bytes"}], largest first: each constant over all tiles, then
        each category's other always-live bytes under its CATEGORIES name
        ("vertexCode", "stack", ...), as Poplar names them. They sum to
        tiles.always_live.sum()."""
        return self._native.always_live_variables()

    @functools.cached_property
    def not_always_live_variables(self):
        """[{"name", "bytes", "first_step", "last_step"}], largest first: each
        not-always-live variable and each step's exchange receive buffers over
        all tiles, live from step first_step to last_step (indexes of
        `liveness`, inclusive). Those live at step i sum to
        liveness["not_always_live"][i]; empty for a text report or an older file."""
        return self._native.not_always_live_variables()

    @functools.cached_property
    def operations(self):
        """[{"name", "opcode", "vertices", "vertex_state_bytes", "exchange_bytes",
        "flops" (None where not estimated: loops, calls, sorts, custom calls),
        "code_bytes" and "tiles" (None before format 1.2), "compute_sets"
        (indexes of `compute_sets`), "tile_runs" ([(first tile, last tile,
        vertices)])}]: each HLO instruction the compiler lowered into compute
        sets; empty for a text report or a file before format 1.1."""
        return self._native.operations()

    def live_at(self, step):
        """The not_always_live_variables live during `step`, largest first."""
        return [v for v in self.not_always_live_variables
                if v["first_step"] <= step <= v["last_step"]]

    @functools.cached_property
    def printed_memory(self):
        """What a text report printed of memory, which has no per-tile data:
        {"total": usage or None, "tiles": {tile number: usage}, "tiles_out_of_memory"}
        where a usage is {"including_gaps", "excluding_gaps", "by_region": {label: bytes},
        "by_category": {CATEGORIES name: bytes}} with only the rows the text printed
        (a figure it did not print is None). None for JSON, CBOR and SQLite reports:
        use `tiles`."""
        return self._native.printed_memory()

    @functools.cached_property
    def execution(self):
        """{"programs", "total_cycles", "clock_hz", "steps": [{"program", "cycles",
        "cycles_by_tile", "compute_cycles", "exchange_cycles", "sync_cycles"}],
        "tile_cycles": [{"tile", "compute", "exchange", "sync"}] (a tile-level
        profile)}, or None for a compile-only report."""
        return self._native.execution()

    # The analyses: the same data their commands print with --format=json.
    def hist(self, including_gaps=False, bucket_kb=0):
        return json.loads(_tileprof.hist_json(self._native, including_gaps, bucket_kb))

    def top(self, count=5):
        return json.loads(_tileprof.top_json(self._native, count))

    def top_vertex_types(self, count=5):
        return json.loads(_tileprof.top_vertex_types_json(self._native, count))

    def oom(self, tensor_map="", tiles=5, items=10):
        return json.loads(_tileprof.oom_json(self._native, tensor_map, tiles, items))

    def compare(self, other, count=20):
        """This report as A and `other` as B, as `tileprof compare A B`."""
        return json.loads(_tileprof.compare_json(self._native, other._native, count))

    def __repr__(self):
        return f"tileprof.Report({self.path!r}, format={self.format!r})"


def open_report(path):
    """Reads a report in any format; raises ReportError with the CLI's message."""
    return Report(_tileprof.open(str(path)))
