"""Every mistake raises libane.Error with the message the command-line tool prints (without its prefix)."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import libane
from conftest import NETWORKS_DIR, need_corpus, tool_error

HERE = Path(__file__).resolve().parent


def error_of(call, *args, **kwargs):
    with pytest.raises(libane.Error) as e:
        call(*args, **kwargs)
    return str(e.value)


def test_error_is_an_exception():
    assert issubclass(libane.Error, Exception)


@pytest.mark.parametrize("kind", ["garbage", "empty", "truncated_header", "truncated_segment"])
def test_malformed_file_gives_hwx_dump_message(kind, mlp_hwx, tmp_path, monkeypatch):
    if kind.startswith("truncated"):
        program = Path(mlp_hwx[0]).read_bytes()
        data = program[:100] if kind == "truncated_header" else program[:len(program) // 2]
    else:
        data = b"" if kind == "empty" else b"this is not a neural engine program at all"
    (tmp_path / "bad.hwx").write_bytes(data)
    # The path as the caller gave it: absolute, then relative.
    absolute = str(tmp_path / "bad.hwx")
    assert error_of(libane.open, absolute) == tool_error("HWX_DUMP", absolute)
    monkeypatch.chdir(tmp_path)
    want = tool_error("HWX_DUMP", "bad.hwx")
    assert want.startswith("bad.hwx: ")
    assert error_of(libane.open, "bad.hwx") == want
    assert error_of(libane.parse, data, path="bad.hwx") == want


def test_missing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    want = tool_error("HWX_DUMP", "missing.hwx")
    assert error_of(libane.open, "missing.hwx") == want
    assert error_of(libane.compile, "missing.plist") == tool_error("HWX_BUILD", "missing.plist", "-o", "x.hwx")


def test_unknown_anec_descriptor_entry():
    corpus = need_corpus()
    path, manifest = str(corpus / "anec/binary/add.bin"), str(corpus / "anec/MANIFEST.json")
    want = tool_error("HWX_DUMP", "--descriptor", manifest, "--entry", "nosuch", path)
    assert error_of(libane.open, path, descriptor=manifest, entry="nosuch") == want


@pytest.mark.parametrize("old,new", [("<string>Neuron</string>", "<string>Pooling</string>"),
                                     ("<string>ReLU</string>", "<string>Elu</string>")])
def test_unsupported_layer_gives_hwx_build_message(old, new, tmp_path):
    src = NETWORKS_DIR / "relu" / "net.plist"
    text = src.read_text()
    assert old in text
    plist = tmp_path / "net.plist"
    plist.write_text(text.replace(old, new))
    want = tool_error("HWX_BUILD", plist, "-o", tmp_path / "x.hwx")
    assert "unsupported" in want
    assert error_of(libane.compile, str(plist)) == want


# Run errors: the mlp example has inputs 'x' [1,16,1,8] and 'skip' [1,8,1,8].

def test_unknown_input_gives_hwx_run_message(mlp_hwx, tmp_path):
    path, inputs = mlp_hwx
    x, skip = tmp_path / "x.npy", tmp_path / "skip.npy"
    np.save(x, inputs["x"])
    np.save(skip, inputs["skip"])
    want = tool_error("HWX_RUN", path, "-i", f"nosuch={x}", "-i", f"skip={skip}", "-o", tmp_path / "o")
    got = error_of(libane.run, libane.open(path), {"nosuch": inputs["x"], "skip": inputs["skip"]})
    assert "'nosuch'" in got
    assert got == want


def test_missing_input_gives_hwx_run_message(mlp_hwx, tmp_path):
    path, inputs = mlp_hwx
    skip = tmp_path / "skip.npy"
    np.save(skip, inputs["skip"])
    want = tool_error("HWX_RUN", path, "-i", f"skip={skip}", "-o", tmp_path / "o")
    got = error_of(libane.run, libane.open(path), {"skip": inputs["skip"]})
    assert "'x'" in got
    assert got == want


@pytest.mark.parametrize("bad", [np.zeros(63, np.float16), np.zeros((1, 8, 1, 9), np.float32),
                                 np.zeros((1, 8, 1, 8), np.int32), np.zeros((1, 8, 1, 8), np.float64)],
                         ids=["63-elements", "72-elements", "int32", "float64"])
def test_bad_input_array_names_the_buffer(mlp_hwx, bad):
    path, inputs = mlp_hwx
    got = error_of(libane.run, libane.open(path), {"x": inputs["x"], "skip": bad})
    assert "skip" in got


def test_hostile_files_never_crash():
    """Seeded random mutations of corpus files, parsed in a child process so that a crash is
    reported (with the mutation that caused it) instead of ending the test run."""
    corpus = need_corpus()
    problems = []
    for name, count, seed in (("hwx/relu.hwx", 200, 1), ("hwx/conv.hwx", 100, 2), ("anec/unary/tanh.bin", 100, 3)):
        r = subprocess.run([sys.executable, str(HERE / "mutate.py"), str(corpus / name), str(count), str(seed)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or f"{count} mutations" not in r.stdout:
            lines = r.stdout.splitlines()
            report = [line for line in lines if not re.fullmatch(r"mutation \d+", line)] or lines[-1:]
            problems.append(f"{name} (exit {r.returncode}):\n  " + "\n  ".join(report[-20:]) + r.stderr[-1000:])
    assert not problems, "\n".join(problems)
