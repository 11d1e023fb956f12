"""libane.compile on Core ML input: MIL text and an .mlmodelc bundle, as hwx-build compiles them."""
import shutil

import numpy as np
import pytest

import libane
from conftest import SOURCE_DIR, tool_ok

BUNDLE = SOURCE_DIR / "tests" / "fixtures" / "coreml" / "add_model.mlmodelc"


def test_bundle_compiles_as_hwx_build_and_multiplies(tmp_path):
    out = tmp_path / "cli.hwx"
    tool_ok("HWX_BUILD", BUNDLE, "-o", out, "--ident", "x")
    p = libane.compile(str(BUNDLE), ident="x")
    assert p.to_bytes() == out.read_bytes()
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, (1, 10)).astype(np.float16)
    y = rng.uniform(-4, 4, (1, 10)).astype(np.float16)
    outs = libane.run(p, {"x": x.reshape(1, 1, 1, 10), "y": y.reshape(1, 1, 1, 10)})
    # One fp16 product, rounded once: exact in fp32, so the reference is too.
    want = (x.astype(np.float32) * y.astype(np.float32)).astype(np.float16).reshape(1, 1, 1, 10)
    assert list(outs) == ["var_3@output"]
    np.testing.assert_array_equal(outs["var_3@output"].view(np.uint16), want.view(np.uint16))


def test_mil_text_with_its_weights_file(tmp_path):
    shutil.copy(BUNDLE / "model.mil", tmp_path / "model.mil")
    assert libane.compile(str(tmp_path / "model.mil"), ident="x").to_bytes() == \
        libane.compile(str(BUNDLE), ident="x").to_bytes()


def test_errors_name_the_mil_line_and_op(tmp_path):
    text = (BUNDLE / "model.mil").read_text().replace("mul(", "matmul(")
    (tmp_path / "model.mil").write_text(text)
    with pytest.raises(libane.Error, match=r"model\.mil:5: op 'matmul': not supported"):
        libane.compile(str(tmp_path / "model.mil"))


def test_mlpackage_is_refused_with_a_pointer(tmp_path):
    pkg = tmp_path / "Model.mlpackage"
    pkg.mkdir()
    (pkg / "Manifest.json").write_text("{}")
    with pytest.raises(libane.Error, match="coremlcompiler compile"):
        libane.compile(str(pkg))


def test_compiler_profile_defaults_and_choice(tmp_path):
    # Core ML input defaults to macos26, which binds slots in name order (var_3@output 4, x 5, y 6).
    mac = libane.compile(str(BUNDLE), ident="x")
    assert mac.to_bytes() == libane.compile(str(BUNDLE), ident="x", compiler="macos26").to_bytes()
    old = libane.compile(str(BUNDLE), ident="x", compiler="v4.2.1")
    assert old.to_bytes() != mac.to_bytes()
    out = tmp_path / "old.hwx"
    tool_ok("HWX_BUILD", BUNDLE, "--compiler", "v4.2.1", "-o", out, "--ident", "x")
    assert old.to_bytes() == out.read_bytes()
    with pytest.raises(libane.Error, match="expected 'v4.2.1' or 'macos26'"):
        libane.compile(str(BUNDLE), compiler="macos27")


def _milblob_fp16(values):
    """A MILBlob v2 file of one fp16 blob (coremltools' layout): a 64-byte header
    (count 1, version 2), the metadata record at 64 (sentinel, type 1 = fp16, size,
    data offset 128), the data at 128."""
    data = np.asarray(values, np.float16).tobytes()
    header = np.array([1, 2], "<u4").tobytes().ljust(64, b"\0")
    meta = (np.array([0xDEADBEEF, 1], "<u4").tobytes() + np.array([len(data), 128], "<u8").tobytes()).ljust(64, b"\0")
    return header + meta + data


@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum"])
def test_bundle_with_a_tensor_constant_runs_to_the_op(tmp_path, op):
    # x op v for a [1,C,1,1] x and a weight-blob constant v: Apple's two-task form
    # (docs/mil.md, "Tensor constants"), checked against numpy's fp32 op rounded once.
    c = 24
    rng = np.random.default_rng(11)
    v = rng.uniform(-3, 3, c).astype(np.float16)
    bundle = tmp_path / "Const.mlmodelc"
    (bundle / "weights").mkdir(parents=True)
    (bundle / "weights" / "weight.bin").write_bytes(_milblob_fp16(v))
    t = f"tensor<fp16, [1, {c}, 1, 1]>"
    (bundle / "model.mil").write_text(
        "program(1.3)\n[buildInfo = dict<string, string>({})]\n{\n"
        f"  func main<ios18>({t} x) {{\n"
        f"    {t} v = const()[name = string(\"v\"), val = {t}(BLOBFILE(path = "
        "string(\"@model_path/weights/weight.bin\"), offset = uint64(64)))];\n"
        f"    {t} y = {op}(x = x, y = v)[name = string(\"y\")];\n"
        "  } -> (y);\n}\n")
    out = tmp_path / "cli.hwx"
    tool_ok("HWX_BUILD", bundle, "-o", out, "--ident", "x")
    p = libane.compile(str(bundle), ident="x")
    assert p.to_bytes() == out.read_bytes()
    assert len(p.tasks) == 2
    x = rng.uniform(-4, 4, (1, c, 1, 1)).astype(np.float16)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}[op]
    want = fn(x.astype(np.float32), v.astype(np.float32).reshape(1, c, 1, 1)).astype(np.float16)
    got = libane.run(p, {"x": x})["y@output"]
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
