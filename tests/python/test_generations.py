"""H14 - H18 through the Python module: the bundled H16 example (an assembled public record)."""
from pathlib import Path

import pytest

import libane
from conftest import SOURCE_DIR, dump_json

H16_ADD = SOURCE_DIR / "examples" / "h16" / "add_1x64x8x8.hwx"


def test_target_and_fields_by_name():
    p = libane.open(str(H16_ADD))
    assert p.target == "h16"
    (t,) = p.tasks
    assert t.target == "h16"
    # The record's values (binary_add_1x64x8x8 on H16): 64 channels of 8 x 8, PE add.
    assert (t["Common.InDim.Win"], t["Common.InDim.Hin"], t["Common.Cin.Cin"]) == (8, 8, 64)
    assert t["Common.Cfg.TaskType"] == 3 and t["PE.Cfg.SecSrc"] == 2 and t["PE.Cfg.OpMode"] == 0
    assert t.written()[0x4500] == 0x00080000
    assert "Common.Broadcast.Src2C" not in t  # H16 leaves it unwritten: not a zero
    with pytest.raises(KeyError, match="on H16"):
        t["Header[8].RBase0"]  # an H13 header field: H16 tasks bind tensors by relocation tags
    assert t.summary.startswith("task 0 (H16): PE add = a + b, fp16 [1,64,8,8] -> [1,64,8,8]")


def test_same_document_as_hwx_dump():
    p = libane.open(str(H16_ADD))
    doc = dump_json(str(H16_ADD))
    assert p.to_dict() == doc
    assert doc["target"] == "h16" and doc["tasks"][0]["generation"] == "h16"


def test_run_h16_with_its_rounding():
    """H16 runs, rounding ties away from zero by default (M4's reported rounding)."""
    import numpy as np

    p = libane.open(str(H16_ADD))
    # 2048 + 1 is a tie between 2048 and 2050: away from zero gives 2050, nearest even 2048.
    x = np.full((1, 64, 8, 8), 2048, dtype=np.float16)
    z = np.ones((1, 64, 8, 8), dtype=np.float16)
    assert np.all(libane.run(p, {"x": x, "z": z})["y"] == 2050)
    assert np.all(libane.run(p, {"x": x, "z": z}, options=["round=rne"])["y"] == 2048)


def test_run_h14_example():
    """The H14 tanh example runs through the Python module as through hwx-run."""
    import numpy as np

    ex = SOURCE_DIR / "examples" / "h14"
    p = libane.open(str(ex / "tanh_c64.hwx"))
    assert p.target == "h14"
    x = np.load(ex / "inputs" / "x.npy")
    out = libane.run(p, {"x": x})
    want = np.load(ex / "expected" / "y.npy").astype(np.float64)
    # The table interpolates between nodes 1/8 apart: within 1.5e-3 of tanh (docs/simulator.md).
    assert np.max(np.abs(out["y"].astype(np.float64) - want)) <= 2e-3
