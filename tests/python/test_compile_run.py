"""libane.compile and libane.run agree with hwx-build, hwx-run and the examples' expected outputs."""
import json
import shutil
import threading

import numpy as np
import pytest

import libane
from conftest import NETWORKS, NETWORKS_DIR, max_difference, network_inputs, npy_name, tool_ok

TRACE_KEYS = ("task", "engine", "op", "in_shape", "out_shape", "dma", "notes", "traced", "min", "max", "nan", "inf",
              "subnormal", "checksum")


def run_args(inputs, *extra):
    """hwx-run's -i NAME=FILE arguments for the example inputs (files under examples/networks)."""
    return [a for name, f in inputs for a in ("-i", f"{name}={f}")] + list(extra)


def example_input_files(net):
    return [(f.stem, str(f)) for f in sorted((NETWORKS_DIR / net / "inputs").glob("*.npy"))]


def test_there_are_examples():
    assert len(NETWORKS) >= 10, NETWORKS


@pytest.mark.parametrize("net", NETWORKS)
def test_example_network_compiles_runs_and_matches_expected(net):
    d = NETWORKS_DIR / net
    q = libane.compile(str(d / "net.plist"))
    outputs = [b for b in q.buffers if b.direction == "output"]
    expected = sorted(f.name for f in (d / "expected").glob("*.npy"))
    assert sorted(npy_name(b.name) for b in outputs) == expected

    # Like tests/examples_test.cpp: the ideal sigmoid gives the reference bit for bit,
    # Apple's straight-line table stays within 0.0035 of it.
    for options, tolerance in (({"lut": "ideal"}, 0.0), (None, 0.0035)):
        outs = libane.run(q, network_inputs(net), options=options)
        assert sorted(outs) == sorted(b.name for b in outputs)
        for b in outputs:
            got = outs[b.name]
            assert got.dtype == np.float16 and got.flags.c_contiguous
            assert got.shape == b.shape
            want = np.load(d / "expected" / npy_name(b.name))
            assert max_difference(got, want) <= tolerance, (b.name, options)


@pytest.mark.parametrize("net", ["mlp", "image", "concat"])
def test_compile_equals_hwx_build(net, tmp_path):
    plist = str(NETWORKS_DIR / net / "net.plist")
    out = tmp_path / "cli.hwx"
    tool_ok("HWX_BUILD", plist, "-o", out, "--ident", "x")
    assert libane.compile(plist, ident="x").to_bytes() == out.read_bytes()


def test_compile_with_weights_dir(tmp_path):
    src = NETWORKS_DIR / "mlp"
    plist = tmp_path / "net.plist"
    shutil.copy(src / "net.plist", plist)  # the weight file stays behind
    with pytest.raises(libane.Error):
        libane.compile(str(plist))
    out = tmp_path / "cli.hwx"
    tool_ok("HWX_BUILD", plist, "--weights-dir", src, "-o", out, "--ident", "x")
    assert libane.compile(str(plist), weights_dir=str(src), ident="x").to_bytes() == out.read_bytes()


@pytest.mark.parametrize("options,cli_options", [
    (None, []),
    ({"acc": "fp64"}, ["--option", "acc=fp64"]),
    (["acc=fp64", "lut=ideal"], ["--option", "acc=fp64", "--option", "lut=ideal"]),
])
def test_run_equals_hwx_run_outputs(mlp_hwx, tmp_path, options, cli_options):
    path, inputs = mlp_hwx
    outdir = tmp_path / "out"
    tool_ok("HWX_RUN", path, *run_args(example_input_files("mlp"), "-o", outdir, *cli_options))
    outs = libane.run(libane.open(path), inputs, options=options)
    assert len(outs) == 2
    for name, got in outs.items():
        want = np.load(outdir / npy_name(name))
        assert got.shape == want.shape
        assert got.view(np.uint16).tolist() == want.view(np.uint16).tolist(), name


def test_trace_records_match_hwx_run(mlp_hwx, tmp_path):
    path, inputs = mlp_hwx
    p = libane.open(path)
    outs, records = libane.run(p, inputs, trace=True)
    files = example_input_files("mlp")
    text = tool_ok("HWX_RUN", path, *run_args(files, "-o", tmp_path / "a", "--trace"))
    lines = [line for line in text.splitlines() if line.startswith("task ")]
    doc = json.loads(tool_ok("HWX_RUN", path, *run_args(files, "-o", tmp_path / "b", "--json")))

    assert len(records) == len(p.tasks) == len(lines) == len(doc["tasks"]) == 3
    assert [r["line"] for r in records] == lines
    for r, want in zip(records, doc["tasks"]):
        got = json.loads(json.dumps({k: r[k] for k in TRACE_KEYS}))  # tuples -> lists, as in JSON
        assert got == {k: want[k] for k in TRACE_KEYS}
    plain = libane.run(p, inputs)
    assert all(np.array_equal(outs[k], plain[k]) for k in plain)


def test_float32_inputs_are_rounded_and_any_shape_is_accepted(mlp_hwx):
    path, inputs = mlp_hwx
    p = libane.open(path)
    rng = np.random.default_rng(7)
    x32 = rng.uniform(-2, 2, size=(1, 16, 1, 8)).astype(np.float32)
    a = libane.run(p, {"x": x32, "skip": inputs["skip"]})
    b = libane.run(p, {"x": x32.astype(np.float16), "skip": inputs["skip"]})
    c = libane.run(p, {"x": x32.astype(np.float16).reshape(-1), "skip": inputs["skip"].reshape(8, 8)})
    for k in a:
        assert np.array_equal(a[k], b[k]) and np.array_equal(a[k], c[k]), k


def test_strided_and_unaligned_inputs_read_in_c_order(mlp_hwx):
    # libane.run reads an array's memory directly where it can; views that are
    # strided, transposed or unaligned must give the values in C order all the same.
    path, inputs = mlp_hwx
    p = libane.open(path)
    rng = np.random.default_rng(11)
    x = rng.uniform(-2, 2, size=(1, 16, 1, 8)).astype(np.float16)
    want = libane.run(p, {"x": x, "skip": inputs["skip"]})
    strided = np.zeros((1, 16, 1, 16), np.float16)
    strided[..., ::2] = x
    transposed = np.ascontiguousarray(x.reshape(16, 8).T).T  # a Fortran-ordered view of the same values
    raw = np.zeros(4 * 128 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32)  # float32 one byte off alignment
    unaligned[:] = x.astype(np.float32).reshape(-1)
    for given in (strided[..., ::2], transposed, unaligned):
        got = libane.run(p, {"x": given, "skip": inputs["skip"]})
        for k in want:
            assert np.array_equal(got[k], want[k]), k


def test_options_and_assumptions(mlp_hwx):
    path, inputs = mlp_hwx
    p = libane.open(path)
    libane.run(p, inputs, options={"acc": "fp64"}, assume=["A3"])
    with pytest.raises(libane.Error) as e:
        libane.run(p, inputs, options={"no_such_option": "1"})
    assert "no_such_option" in str(e.value)
    with pytest.raises(libane.Error):
        libane.run(p, inputs, options={"acc": "fp7"})
    with pytest.raises(libane.Error):
        libane.run(p, inputs, assume=["A9"])


def test_runs_in_threads_agree(mlp_hwx):
    """The module releases the GIL while running: concurrent runs must still give the same result."""
    path, inputs = mlp_hwx
    p = libane.open(path)
    want = libane.run(p, inputs)
    results = [None] * 4

    def work(i):
        results[i] = libane.run(p, inputs) if i % 2 else libane.run(libane.compile(
            str(NETWORKS_DIR / "mlp" / "net.plist")), inputs)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert r is not None and all(np.array_equal(r[k], want[k]) for k in want)


TANH_WIDE = """<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Networks</key><array><string>net</string></array>
<key>net</key><dict>
<key>Inputs</key><array><string>x</string></array>
<key>Outputs</key><array><string>y@output</string></array>
<key>Units</key><array><string>y</string></array>
<key>x</key><dict><key>InputChannels</key><integer>64</integer><key>InputHeight</key><integer>1</integer>
<key>InputWidth</key><integer>8192</integer><key>InputType</key><string>Float16</string></dict>
<key>y</key><dict><key>Bottom</key><string>x</string><key>Type</key><string>Neuron</string>
<key>Params</key><dict><key>Type</key><string>Tanh</string></dict></dict>
<key>y@output</key><dict><key>Bottom</key><string>y</string></dict>
</dict></dict></plist>
"""


def test_reused_buffers_carry_nothing_between_runs(tmp_path):
    """1 MiB buffers stay mapped from run to run: a run after another one (or after
    release_cached_memory) must give exactly what a first run gives."""
    plist = tmp_path / "net.plist"
    plist.write_text(TANH_WIDE)
    p = libane.compile(str(plist))
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 3, (1, 64, 1, 8192)).astype(np.float16)
    b = rng.uniform(-3, 3, (1, 64, 1, 8192)).astype(np.float16)
    first_a = libane.run(p, {"x": a})["y@output"]
    first_b = libane.run(p, {"x": b})["y@output"]
    assert not np.array_equal(first_a, first_b)
    assert np.array_equal(libane.run(p, {"x": a})["y@output"], first_a)
    libane.release_cached_memory()
    assert np.array_equal(libane.run(p, {"x": b})["y@output"], first_b)
    np.testing.assert_allclose(first_a.astype(np.float32), np.tanh(a.astype(np.float32)), atol=3e-3)
