"""libane.open / parse / diff agree with hwx-dump on every corpus file."""
import json
from pathlib import Path

import pytest

import libane
from conftest import corpus_params, dump_json, need_corpus, tool, tool_ok

# A few fields checked one by one through Task[...] (where the task holds them).
FIELDS = ("Common.InDim.Win", "Common.InDim.Hin", "Common.Cin.Cin", "Common.Cout.Cout", "Common.Cfg.TaskType",
          "Header[0].TID", "Header[8].RBase0", "Header[8].WBase")


def check_program(p, path, doc):
    """Program p (opened from path) against doc, hwx-dump's JSON for the same path."""
    assert p.to_dict() == doc
    assert p.path == path
    assert p.format == doc["format"]
    assert p.size == doc["size"] == Path(path).stat().st_size
    assert isinstance(p.name, str)
    assert p.to_bytes() == Path(path).read_bytes()

    assert [b.name for b in p.buffers] == [b["name"] for b in doc["buffers"]]
    for b, jb in zip(p.buffers, doc["buffers"]):
        assert (b.direction, b.slot, b.address, b.size) == (jb["direction"], jb["slot"], jb["address"], jb["size"])
        assert b.shape == (jb["n"], jb["c"], jb["h"], jb["w"])
        assert b.strides == tuple(jb["strides"][k] for k in "nchw")
        assert b.dtype == jb["type_name"]
        if "offset" in jb:
            assert b.offset == jb["offset"]

    assert len(p.tasks) == len(doc["tasks"]) > 0
    for t, jt in zip(p.tasks, doc["tasks"]):
        regs = jt["registers"]
        assert t.index == jt["index"]
        assert t.summary == jt["summary"]
        assert t.fields() == regs
        checked = [f for f in FIELDS if f in regs]
        assert checked, "none of the sample fields is in the task"
        for f in checked:
            assert f in t
            assert t[f] == regs[f], f
        assert "No.Such.Field" not in t
        with pytest.raises(KeyError):
            t["No.Such.Field"]


def check_dumps(p, path, *args):
    assert p.dump() == tool_ok("HWX_DUMP", *args, path)
    assert p.dump(summary=True) == tool_ok("HWX_DUMP", "--summary", *args, path)
    assert p.dump(raw=True) == tool_ok("HWX_DUMP", "--raw", *args, path)


@pytest.mark.parametrize("name", corpus_params("hwx/*.hwx"))
def test_hwx_corpus_file_matches_hwx_dump(name):
    path = str(need_corpus() / name)
    p = libane.open(path)
    assert p.format == "hwx"
    check_program(p, path, dump_json(path))
    check_dumps(p, path)


@pytest.mark.parametrize("name", corpus_params("anec/*/*.bin"))
def test_anec_corpus_file_matches_hwx_dump(name):
    path = str(need_corpus() / name)
    p = libane.open(path)
    doc = dump_json(path)
    assert p.format == "anec"
    assert p.name == doc["name"]
    check_program(p, path, doc)
    check_dumps(p, path)


def test_anec_with_descriptor_matches_hwx_dump():
    corpus = need_corpus()
    path, manifest = str(corpus / "anec/binary/add.bin"), str(corpus / "anec/MANIFEST.json")
    p = libane.open(path, descriptor=manifest, entry="add")
    doc = dump_json(path, "--descriptor", manifest, "--entry", "add")
    assert p.to_dict() == doc
    assert [b.name for b in p.buffers] == [b["name"] for b in doc["buffers"]]
    assert p.dump() == tool_ok("HWX_DUMP", "--descriptor", manifest, "--entry", "add", path)


def test_parse_bytes_is_open():
    path = str(need_corpus() / "hwx/relu.hwx")
    data = Path(path).read_bytes()
    p = libane.parse(data, path=path)
    assert p.path == path
    assert p.to_bytes() == data
    assert p.to_dict() == dump_json(path)
    assert libane.parse(data).path == "<bytes>"
    anec = need_corpus() / "anec/unary/tanh.bin"
    assert libane.parse(anec.read_bytes()).format == "anec"


def test_format_can_be_forced():
    corpus = need_corpus()
    hwx, anec = str(corpus / "hwx/relu.hwx"), str(corpus / "anec/binary/add.bin")
    assert libane.open(hwx, format="hwx").to_dict() == dump_json(hwx, "--format", "hwx")
    # An anec image read as an HWX is refused with hwx-dump's message.
    r = tool("HWX_DUMP", "--format", "hwx", anec)
    assert r.returncode == 2
    with pytest.raises(libane.Error) as e:
        libane.open(anec, format="hwx")
    assert str(e.value) == r.stderr.removeprefix("hwx-dump: ").rstrip("\n")


def test_save_round_trip(tmp_path):
    path = str(need_corpus() / "hwx/sigmoid.hwx")
    out = str(tmp_path / "copy.hwx")
    libane.open(path).save(out)
    assert Path(out).read_bytes() == Path(path).read_bytes()
    assert libane.open(out).dump() == tool_ok("HWX_DUMP", out)


def test_diff_matches_hwx_dump():
    corpus = need_corpus()
    a, b = str(corpus / "hwx/relu.hwx"), str(corpus / "hwx/sigmoid.hwx")
    r = tool("HWX_DUMP", "--json", "--diff", a, b)
    assert r.returncode == 1, r.stderr  # 1: differences found
    want = json.loads(r.stdout)
    assert want, "relu and sigmoid should differ"
    assert libane.diff(libane.open(a), libane.open(b)) == want
    assert libane.diff(libane.open(a), libane.open(a)) == []
