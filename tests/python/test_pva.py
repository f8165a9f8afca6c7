"""tileprof.pva: libpva's object model, and Graphcore's published libpva
scripts run unchanged but for their import line."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import tileprof
import tileprof.pva as pva
from conftest import tileprof as tileprof_cli

EXAMPLES = pathlib.Path(__file__).parent / "libpva_examples"


def run_example(script, profile, workdir, profile_at="profile.pop"):
    """Runs a published libpva script with `import pva` swapped for tileprof's,
    in a directory where its `profile_at` is `profile`; returns its stdout."""
    (workdir / profile_at).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(profile, workdir / profile_at)
    text = (EXAMPLES / script).read_text()
    assert text.count("\nimport pva\n") == 1
    (workdir / script).write_text(text.replace("\nimport pva\n", "\nimport tileprof.pva as pva\n"))
    run = subprocess.run([sys.executable, script], cwd=workdir, capture_output=True, text=True,
                         env=dict(os.environ, MPLBACKEND="Agg"))
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("fmt", ["json", "cbor", "sqlite"])
def test_libpva_examples_print_tileprofs_figures(adder, tmp_path, fmt):
    out = run_example("libpva_examples.py", adder[fmt], tmp_path / fmt)
    report = tileprof.open_report(adder[fmt])
    figures = dict(re.findall(r"^(.*?):\s+(\S.*)$", out, re.M))
    assert int(figures["Number of compute sets"]) == report.graph.num_compute_sets
    assert int(figures["Number of tiles on target"]) == 1472
    assert figures["Version of Poplar used"] == f"tileprof {tileprof.__version__}"
    assert int(figures["Total number of cycles for all steps"]) == report.execution["total_cycles"]
    # The compute sets of executed steps with more than one vertex, by name.
    many = {cs["name"] for cs in report.compute_sets if sum(n for _, n in cs["vertices"]) > 1}
    listed = out.split("more than one vertex:\n")[1].split("Plot saved")[0].split()
    executed = {s["program"] for s in report.execution["steps"]}
    programs = report.programs
    expected = [p["name"] for p in programs if p["kind"] == "Execute" and p["name"] in executed
                and report.compute_sets[p["compute_set"]]["name"] in many]
    assert set(listed) == set(expected)
    assert (tmp_path / fmt / "MemoryByTilePlot.png").stat().st_size > 0


def test_libpva_examples_on_the_demos_mnist_profile(mnist, tmp_path):
    out = run_example("libpva_examples.py", mnist["sqlite"], tmp_path / "mnist")
    figures = dict(re.findall(r"^(.*?):\s+(\S.*)$", out, re.M))
    report = tileprof.open_report(mnist["sqlite"])
    assert int(figures["Number of compute sets"]) == report.graph.num_compute_sets
    assert int(figures["Total number of cycles for all steps"]) == report.execution["total_cycles"]
    # The CLI's own figure for the same profile.
    _, text, _ = tileprof_cli("hist", mnist["sqlite"], "--format=json")
    assert sum(row["tiles"] for row in json.loads(text)["histogram"]) == \
        int(figures["Number of tiles on target"])


def test_the_libpva_tutorial_walkthrough_on_the_demos_mnist_profile(mnist, tmp_path):
    # Graphcore's tutorial first trains MNIST with PopTorch (absent here: its
    # subprocess fails and the script goes on), then opens the newest
    # mydirectory/training/*.pop: tileprof's profile of the demo's MNIST step.
    workdir = tmp_path / "walkthrough"
    out = run_example("walkthrough_code_only.py", mnist["sqlite"], workdir,
                      profile_at="mydirectory/training/profile.pop")
    report = tileprof.open_report(mnist["sqlite"])
    figures = dict(re.findall(r"^(.*?):\s+(\S.*)$", out, re.M))
    assert int(figures["Number of compute sets"]) == report.graph.num_compute_sets
    assert int(figures["Number of tiles on target"]) == report.target.total_tiles
    assert figures["Version of Poplar used"] == f"tileprof {tileprof.__version__}"
    # Then the names of executed compute sets with more than one vertex.
    listed = [line for line in out.splitlines() if ":" not in line and line.strip()]
    executed = {s["program"] for s in report.execution["steps"]}
    many = {cs["name"] for cs in report.compute_sets if sum(n for _, n in cs["vertices"]) > 1}
    expected = {p["name"] for p in report.programs if p["kind"] == "Execute"
                and p["name"] in executed and report.compute_sets[p["compute_set"]]["name"] in many}
    assert listed and set(listed) == expected
    assert (workdir / "MemoryByTilePlot.png").stat().st_size > 0


def test_libpva_examples_on_an_out_of_memory_profile(oom_reports, tmp_path):
    # Compiled, not executed (it does not fit): as with libpva, the profile
    # has no execution steps, and the memory plot shows the overflow.
    out = run_example("libpva_examples.py", oom_reports["sqlite"], tmp_path / "oom")
    report = tileprof.open_report(oom_reports["sqlite"])
    figures = dict(re.findall(r"^(.*?):\s+(\S.*)$", out, re.M))
    assert int(figures["Number of compute sets"]) == report.graph.num_compute_sets
    assert int(figures["Number of tiles on target"]) == report.target.total_tiles
    assert int(figures["Total number of cycles for all steps"]) == 0
    assert report.execution is None
    assert (tmp_path / "oom" / "MemoryByTilePlot.png").stat().st_size > 0


def test_memory_model(adder):
    report = pva.openReport(str(adder["sqlite"]))
    plain = tileprof.open_report(adder["sqlite"])
    tiles = report.compilation.tiles
    assert len(tiles) == report.compilation.target.numTiles == 1472
    assert [t.memory.total.excludingGaps for t in tiles] == plain.tiles.excluding_gaps.tolist()
    assert [t.memory.total.includingGaps for t in tiles] == plain.tiles.including_gaps.tolist()
    t = max(tiles, key=lambda t: t.memory.total.excludingGaps)
    assert (t.memory.alwaysLiveBytes + t.memory.notAlwaysLiveBytes ==
            t.memory.total.excludingGaps)
    assert t.memory.category.vertexCode.total.excludingGaps == int(
        plain.tiles.category("vertexCode")[t.number])
    assert sum(getattr(t.memory.category, c).total.excludingGaps
               for c in tileprof.CATEGORIES) == t.memory.total.excludingGaps
    assert t.memory.overflowed.excludingGaps == 0
    ipus = report.compilation.ipus
    assert len(ipus) == 1 and len(ipus[0].tiles) == 1472


def test_missing_data_raises_attribute_errors_that_say_what(adder):
    report = pva.openReport(str(adder["json"]))
    tile = report.compilation.tiles[0]
    for get, what in [
        (lambda: tile.memory.vertices, "vertices"),
        (lambda: tile.memory.category.vertexCode.total.includingGaps, "excluding gaps only"),
        (lambda: tile.memory.category.vertexCode.interleaved, "by region"),
        (lambda: tile.memory.category.noSuchCategory, "known: variable, constant"),
        (lambda: report.compilation.livenessProgramSteps[0].notAlwaysLiveMemoryForTile(0),
         "not per tile"),
        (lambda: report.execution.runs, "runs"),
    ]:
        with pytest.raises(AttributeError, match=what):
            get()
    text = pva.openReport(str(adder["text"]))
    for get, what in [
        (lambda: text.compilation.tiles, "no per-tile data"),
        (lambda: text.compilation.livenessProgramSteps, "no liveness per program step"),
        (lambda: text.compilation.alwaysLiveVariables, "no always-live list"),
    ]:
        with pytest.raises(AttributeError, match=what):
            get()


@pytest.mark.parametrize("fmt", ["json", "cbor", "sqlite"])
def test_liveness_steps_and_always_live_variables(adder, oom_reports, fmt):
    for reports in (adder, oom_reports):
        if fmt not in reports:
            continue
        report = pva.openReport(str(reports[fmt]))
        tiles = report.compilation.tiles
        # What the published scripts compute: the always-live variables sum to
        # the tiles' always-live bytes ...
        always_live = sum(v.size for v in report.compilation.alwaysLiveVariables)
        assert always_live == sum(t.memory.alwaysLiveBytes for t in tiles)
        assert all(v.size > 0 for v in report.compilation.alwaysLiveVariables)
        # ... and no step holds more than every tile's own peak at once, while
        # the fullest step holds more than the fullest tile's peak alone.
        steps = report.compilation.livenessProgramSteps
        peak = max(s.notAlwaysLiveMemory.bytes for s in steps)
        assert peak <= sum(t.memory.notAlwaysLiveBytes for t in tiles)
        assert peak >= max(t.memory.notAlwaysLiveBytes for t in tiles) > 0
        # Each step points into the program tree; Execute steps are compute sets.
        programs = report.compilation.programs
        assert all(any(s.program is p for p in programs) for s in steps)
        assert any(s.program.type == "OnTileExecute" for s in steps)
        plain = tileprof.open_report(reports[fmt])
        assert plain.liveness["not_always_live"].tolist() == [
            s.notAlwaysLiveMemory.bytes for s in steps]
        # What is live at each step: the variables behind its bytes.
        for s in steps:
            live = s.notAlwaysLiveMemory.variables
            assert sum(v.size for v in live) == s.notAlwaysLiveMemory.bytes
            assert [v.size for v in live] == sorted((v.size for v in live), reverse=True)
        fullest = max(steps, key=lambda s: s.notAlwaysLiveMemory.bytes)
        assert fullest.notAlwaysLiveMemory.variables, "something is live at the peak"
        # Each step's fullest tile: the largest over steps is the fullest
        # tile's own peak.
        tile_bytes = plain.liveness["fullest_tile_bytes"]
        assert len(tile_bytes) == len(steps)
        assert tile_bytes.max() == plain.tiles.not_always_live.max()
        assert (tile_bytes <= plain.liveness["not_always_live"]).all()


def test_programs_visitor_and_steps(adder):
    report = pva.openReport(str(adder["cbor"]))
    assert report.compilation.graph.numComputeSets == len(report.compilation.computeSets)
    seen = []

    class Visitor(pva.ProgramVisitor):
        def visitOnTileExecute(self, program):
            seen.append((program.name, len(program.computeset.vertices)))

    for step in report.execution.steps:
        step.program.accept(Visitor())
    assert seen, "the adder executes compute sets"
    assert all(n >= 1 for _, n in seen)
    total = sum(s.ipus[0].cycles for s in report.execution.steps)
    assert total == tileprof.open_report(adder["cbor"]).execution["total_cycles"]
    assert report.version.major == tileprof._tileprof.FORMAT_VERSION[0]
    assert report.poplarVersion.string.startswith("tileprof ")
    with pytest.raises(tileprof.ReportError):
        pva.openReport(str(adder["json"]) + ".missing")


def test_target_types_replicas_and_free_memory(adder):
    # The fields Graphcore's ipu_tensorflow_addons profile analyser reads,
    # used the way it uses them.
    report = pva.openReport(str(adder["json"]))
    plain = tileprof.open_report(adder["json"])
    t = report.compilation.target
    assert t.type == pva.Target.Type.Ipu
    assert t.bytesPerIPU == t.bytesPerTile * t.tilesPerIpu
    assert plain.target.replication is None  # one replica: it holds everything
    assert (t.numReplicas, t.ipusPerReplica, t.tilesPerReplica, t.memoryPerReplica) == \
        (1, t.numIPUs, t.numTiles, t.totalMemory)
    free = [t.bytesPerIPU - sum(tile.memory.total.excludingGaps for tile in ipu.tiles)
            for ipu in report.compilation.ipus]
    assert free == [t.bytesPerIPU - int(plain.tiles.excluding_gaps.sum())]
    assert any(s.program.type == pva.Program.Type.OnTileExecute for s in report.execution.steps)
    assert not any(s.program.type == pva.Program.Type.Sync for s in report.execution.steps)
    assert not report.version.isUnstableFormat


def test_replica_lines_of_a_text_report(tmp_path):
    # A Target section as newer SDKs print it (spec/text-report.md), two
    # replicas of one IPU each.
    path = tmp_path / "replicas.rep"
    path.write_text("Target:\n"
                    "  Number of IPUs:         2\n"
                    "  Tiles per IPU:          1,472\n"
                    "  Total Tiles:            2,944\n"
                    "  Memory Per-Tile:        624.0 kB\n"
                    "  Total Memory:           1.8 GB\n"
                    "  Clock Speed (approx):   1,330.0 MHz\n"
                    "  Number of Replicas:     2\n"
                    "  IPUs per Replica:       1\n"
                    "  Tiles per Replica:      1,472\n"
                    "  Memory per Replica:     897.0 MB\n")
    t = pva.openReport(str(path)).compilation.target
    assert (t.numReplicas, t.ipusPerReplica, t.tilesPerReplica) == (2, 1, 1472)
    assert t.memoryPerReplica == tileprof.open_report(path).target.replication["memory_per_replica"]
