"""Reports for the Python tests, written by the built CLI (TILEPROF_CLI)."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("TILEPROF_CLI", str(SOURCE / "build" / "cli" / "tileprof"))


def tileprof(*args, cwd=None, check=True):
    """Runs the CLI; returns (exit status, stdout, stderr)."""
    run = subprocess.run([CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if check and run.returncode != 0:
        raise AssertionError(f"tileprof {' '.join(map(str, args))}: {run.returncode}\n{run.stderr}")
    return run.returncode, run.stdout, run.stderr


def cli_json(*args):
    return json.loads(tileprof(*args, "--format=json")[1])


def write_reports(directory, model, *extra):
    """`tileprof run` of `model` writing every report format; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.json"
    config.write_text(json.dumps({
        "json_report": "report.json", "cbor_report": "report.cbor",
        "profile_db": "report.db", "profile_execution": "tile"}))
    tileprof("run", model, "--config", config, "-o", "report.rep", *extra, cwd=directory)
    return {fmt: directory / f"report.{ext}"
            for fmt, ext in [("text", "rep"), ("json", "json"), ("cbor", "cbor"), ("sqlite", "db")]}


@pytest.fixture(scope="session")
def adder(tmp_path_factory):
    """The seed-004 adder on ipu2, executed: 1,472 tiles, an execution part."""
    return write_reports(tmp_path_factory.mktemp("adder"), SOURCE / "samples" / "adder.hlo")


@pytest.fixture(scope="session")
def oom_reports(tmp_path_factory):
    """samples/oom: a model that does not fit, compiled (not run) for ipu1."""
    directory = tmp_path_factory.mktemp("oom")
    config = directory / "config.json"
    config.write_text(json.dumps({"json_report": "report.json", "profile_db": "report.db",
                                  "tensor_map": "tensor_map.json"}))
    model = next((SOURCE / "samples" / "oom").glob("*.hlo"))
    tileprof("compile", model, "--target", "ipu1", "--allow-out-of-memory", "--progress=false",
             "--config", config, "-o", "report.rep", cwd=directory)
    return {"json": directory / "report.json", "sqlite": directory / "report.db",
            "text": directory / "report.rep", "tensor_map": directory / "tensor_map.json"}


@pytest.fixture(scope="session")
def mnist(tmp_path_factory):
    """The demo's profile: scripts/demo's MNIST training step, run once."""
    directory = tmp_path_factory.mktemp("mnist")
    inputs = subprocess.run(
        ["/usr/bin/python3", SOURCE / "samples" / "mnist" / "make_data.py", directory / "data"],
        capture_output=True, text=True, check=True).stdout.split()
    return write_reports(directory, SOURCE / "samples" / "mnist" / "mnist.hlo", *inputs)
