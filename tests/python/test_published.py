"""Graphcore's published text reports and Execution summaries
(../shared/corpus/published/A01-A10, sources in SOURCES.md there) read
through the Python API: the figures are those the text prints."""

import os
import pathlib

import pytest

import tileprof
import tileprof.pva as pva

SHARED = pathlib.Path(os.environ.get("TILEPROF_SHARED_DIR",
                                     pathlib.Path(__file__).resolve().parents[3] / "shared"))
PUBLISHED = SHARED / "corpus" / "published"


def published(name):
    path = PUBLISHED / name
    if not path.exists():
        pytest.skip(f"{path} is not here (TILEPROF_SHARED_DIR)")
    return tileprof.open_report(path)


def test_every_published_report_opens_as_text():
    paths = sorted(PUBLISHED.glob("A*.txt"))
    if not paths:
        pytest.skip("no published corpus")
    assert len(paths) == 10
    for path in paths:
        report = tileprof.open_report(path)
        assert report.format == "text", path
        assert not report.has_tiles


def test_target_and_graph_sections():
    a01 = published("A01_tfdocs_mk1_target.txt")
    assert a01.target.tiles_per_ipu == 1216
    assert a01.target.bytes_per_tile == 262144
    assert a01.target.sizes_rounded  # read back from "256.0 kB"
    a02 = published("A02_tfdocs_mk1_graph.txt")
    assert a02.graph.num_variables == 30562
    rep = pva.openReport(str(PUBLISHED / "A01_tfdocs_mk1_target.txt"))
    assert rep.compilation.target.numTiles == 1216
    with pytest.raises(AttributeError, match="text report"):
        rep.compilation.tiles


def test_printed_memory_usage():
    a03 = published("A03_tfdocs_mk1_memory_usage.txt").printed_memory
    assert a03["total"]["including_gaps"] == 23878396
    assert a03["total"]["excluding_gaps"] == 5355604
    assert a03["total"]["by_region"]["Non-interleaved"] == 5355604
    assert a03["total"]["by_category"]["stack"] == 3852288
    a04 = published("A04_tfdocs_mk1_tile_histogram_imbalanced.txt")
    assert a04.printed_memory["tiles_out_of_memory"] == 2
    assert sum(row["tiles"] for row in a04.hist()["histogram"]) == 1216
    a05 = published("A05_tfdocs_mk1_tile0_memory_usage.txt").printed_memory
    assert a05["total"] is None
    assert a05["tiles"][0]["excluding_gaps"] == 834339


def test_published_execution_summaries():
    assert published("A07_poplar_tut7_2020-04_mk1_profile_execution_totals.txt") \
        .execution["total_cycles"] == 8190756
    a09 = published("A09_poplar_tut7_sdk2.1-2.2_execution_programs_ipumodel.txt")
    assert a09.execution["total_cycles"] == 6681766
    assert a09.execution["programs"] == ["<anonymous>"]
    assert a09.printed_memory["total"] is None
