"""tileprof.open_report and the analyses, against the CLI's own output."""

import numpy as np
import pytest

import tileprof
from conftest import cli_json, tileprof as run_cli


@pytest.mark.parametrize("fmt", ["json", "cbor", "sqlite"])
def test_every_format_gives_the_same_tiles(adder, fmt):
    base = tileprof.open_report(adder["json"])
    other = tileprof.open_report(adder[fmt])
    assert other.format == fmt
    assert other.target == base.target and other.graph == base.graph
    assert other.has_tiles and len(other.tiles) == 1472
    for name in ["tile", "excluding_gaps", "including_gaps", "always_live", "not_always_live"]:
        np.testing.assert_array_equal(getattr(other.tiles, name), getattr(base.tiles, name))
    np.testing.assert_array_equal(other.tiles.categories, base.tiles.categories)
    assert other.compute_sets == base.compute_sets
    assert other.programs == base.programs


def test_figures_keep_the_report_invariants(adder):
    report = tileprof.open_report(adder["json"])
    assert report.target.total_tiles == 1472 and report.target.arch == "ipu2"
    assert report.tiles.tile.dtype == np.uint64
    # Regions sum to the total, categories to the excluding-gaps bytes.
    regions = sum(report.tiles.region(r) for r in ["Non-interleaved", "Interleaved", "Overflowed"])
    np.testing.assert_array_equal(regions, report.tiles.excluding_gaps)
    np.testing.assert_array_equal(report.tiles.categories.sum(axis=1), report.tiles.excluding_gaps)
    np.testing.assert_array_equal(report.tiles.always_live + report.tiles.not_always_live,
                                  report.tiles.excluding_gaps)
    assert report.graph.num_compute_sets == len(report.compute_sets)
    execution = report.execution
    assert execution["total_cycles"] == sum(s["cycles"] for s in execution["steps"])
    assert execution["total_cycles"] > 0


def test_text_report_has_totals_but_no_tiles(adder):
    report = tileprof.open_report(adder["text"])
    assert report.format == "text" and not report.has_tiles
    assert report.target.total_tiles == 1472
    assert report.hist() == cli_json("hist", adder["text"])


@pytest.mark.parametrize("fmt", ["json", "cbor", "sqlite"])
def test_analyses_return_what_the_commands_print(adder, fmt):
    path = adder[fmt]
    report = tileprof.open_report(path)
    assert report.hist() == cli_json("hist", path)
    assert report.hist(including_gaps=True, bucket_kb=4) == cli_json(
        "hist", path, "--including-gaps", "--bucket-kb", "4")
    assert report.top() == cli_json("top", path)
    assert report.top(count=3) == cli_json("top", path, "-n", "3")
    assert report.top_vertex_types() == cli_json("top", path, "--by", "cycles")
    other = tileprof.open_report(adder["json"])
    assert report.compare(other) == cli_json("compare", path, adder["json"])


def test_analyses_of_a_text_report_fail_as_the_commands_do(adder):
    path = adder["text"]
    report = tileprof.open_report(path)
    assert report.compare(report) == cli_json("compare", path, path)
    # A text report prints no tile blocks when memory is balanced.
    status, _, err = run_cli("top", path, check=False)
    assert status == 1
    with pytest.raises(tileprof.ReportError) as raised:
        report.top()
    assert err.strip() == f"tileprof: top: {raised.value}"


def test_oom_with_a_tensor_map_matches_the_command(oom_reports):
    report = tileprof.open_report(oom_reports["sqlite"])
    assert report.tiles.excluding_gaps.max() > report.target.bytes_per_tile
    expected = cli_json("oom", oom_reports["sqlite"], "--tensor-map", oom_reports["tensor_map"])
    assert report.oom(tensor_map=str(oom_reports["tensor_map"])) == expected
    json_report = tileprof.open_report(oom_reports["json"])
    assert json_report.oom(tiles=2) == cli_json("oom", oom_reports["json"], "--tiles", "2")


def test_missing_and_corrupt_files_raise_the_cli_message(tmp_path, adder):
    missing = tmp_path / "no_such_report.json"
    status, _, err = run_cli("hist", missing, check=False)
    assert status == 1
    with pytest.raises(tileprof.ReportError) as raised:
        tileprof.open_report(missing)
    assert err.strip() == f"tileprof: hist: {raised.value}"

    corrupt = tmp_path / "truncated.cbor"
    data = adder["cbor"].read_bytes()
    corrupt.write_bytes(data[: len(data) // 2])
    status, _, err = run_cli("hist", corrupt, check=False)
    assert status == 1
    with pytest.raises(tileprof.ReportError) as raised:
        tileprof.open_report(corrupt)
    assert err.strip() == f"tileprof: hist: {raised.value}"
    assert str(corrupt) in str(raised.value)

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"SQLite format 3\x00" + bytes(200))
    with pytest.raises(tileprof.ReportError):
        tileprof.open_report(garbage)


def test_tile_vertex_types_are_named(adder):
    report = tileprof.open_report(adder["json"])
    busiest = int(np.argmax(report.tiles.excluding_gaps))
    types = report.tile_vertex_types(busiest)
    assert all(name in report.vertex_types for name, _ in types)
    with pytest.raises(IndexError):
        report.tile_vertex_types(len(report.tiles))


def test_sample_plot_script(adder, tmp_path):
    import subprocess
    import sys

    from conftest import SOURCE

    out = tmp_path / "memory.png"
    run = subprocess.run([sys.executable, SOURCE / "samples" / "python" / "plot_memory.py",
                          adder["sqlite"], "-o", out], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    report = tileprof.open_report(adder["sqlite"])
    assert f"largest tile {int(report.tiles.excluding_gaps.max()):,} B" in run.stdout
    assert out.stat().st_size > 0


@pytest.mark.parametrize("fmt", ["json", "cbor", "sqlite"])
def test_operations_own_compute_sets_and_their_cycles(adder, fmt):
    report = tileprof.open_report(adder[fmt])
    operations = report.operations
    assert operations, "the adder's add is an operation"
    sets = report.compute_sets
    owned = [cs for op in operations for cs in op["compute_sets"]]
    assert len(owned) == len(set(owned)), "a compute set has one operation"
    for op in operations:
        counted = sum(n for cs in op["compute_sets"] for _, n in sets[cs]["vertices"])
        assert op["vertices"] == counted
        # FLOPs are estimated for arithmetic (hlo::EstimateOperationFlops).
        if op["opcode"] == "add":
            assert op["flops"] is not None and op["flops"] > 0
        # Its tiles (format 1.2): runs covering its tile count and vertices.
        assert sum(last - first + 1 for first, last, _ in op["tile_runs"]) == op["tiles"]
        assert sum(n for _, _, n in op["tile_runs"]) == op["vertices"]
        assert op["code_bytes"] > 0
    # The executed steps that ran an operation's compute sets are its cycles
    # (what `tileprof view` adds up): they never exceed the run's total.
    names = {sets[cs]["name"] for cs in owned}
    steps = report.execution["steps"]
    ran = sum(s["cycles"] for s in steps if s["program"] in names)
    assert 0 < ran <= report.execution["total_cycles"]
    # A tile-level profile splits each step's and each tile's cycles.
    tiles = len(report.tiles.excluding_gaps)
    for s in steps:
        assert s["compute_cycles"] + s["exchange_cycles"] + s["sync_cycles"] == s["cycles"] * tiles
    split = report.execution["tile_cycles"]
    assert len(split) == tiles
    assert all(t["compute"] + t["exchange"] + t["sync"] == report.execution["total_cycles"]
               for t in split)
    assert report.liveness["by_ipu"] is None  # one IPU
