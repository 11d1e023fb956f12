"""hwx-run as a process against numpy in a running Python process: the same job, side by side.

The measure (issue 20):
  hwx-run   the whole process, from exec to exit: `hwx-run MODEL -i NAME=x.npy -o OUTDIR`
            (warm file cache).
  numpy     the same job in this long-running Python process, numpy already imported: from
            `np.load` to `np.save` returning (load, fp16 -> fp32, compute, fp32 -> fp16, save).
            Python's start and `import numpy` are what a numpy user pays once, not per job:
            they are printed as their own line and are never part of a ratio.
  ratio     numpy / hwx-run, of the medians (and of the minima): above 1, hwx-run is faster.
  floor     what the job cannot avoid on this machine: the job's compute in numpy on fp32
            arrays already in memory (the sgemm, or the element-wise passes), plus reading the
            input files and writing the output bytes; the minimum of each part, summed.
  +start    hwx-run's median over the floor plus the minimum of an hwx-run process that
            does no job (`hwx-run --help`: exec, loading, OpenBLAS's start, exit), which
            the floor leaves out; hwx/floor is the issue's measure and stays beside it.
  peak      the largest resident set of an hwx-run process, and of a fresh Python process
            that imports numpy and does the job once (the interpreter and numpy included).
            `buffers` is what the program itself holds (hwx-run --json slot_bytes).
  pages     the time to first touch four fresh huge pages, before and after each job: on
            VMs with free page reporting it shows whether the host was backing freed memory
            again (about 1 ms quiet, 25 ms not), which moves hwx-run's times (last line).
  before    with --before OLD/hwx-run: that binary on the same programs, its runs interleaved
            with the other two sides (the same pauses), so that "before" and "after" meet the
            same machine state: a line under each job.

In process (a second table, when BUILD_DIR/python holds the module): `libane.run(program,
inputs)` on float16 arrays already in memory (the program opened once) against the job's
own numpy text run on the same arrays, its np.load / np.fromfile / np.save answered from
memory: the same arithmetic, fp16 -> fp32 -> fp16 conversions included, no file I/O on
either side.

Runs alternate between the sides with a pause after each, so that neither side's BLAS
threads are still spinning when the other starts. Minimum and median over --runs.

Jobs:
  conv_1x8192  a 512 -> 512 1x1 convolution over 8192 positions laid out as one row,
               input [1,512,1,8192] (8 MiB fp16), random fp16 weights (hwx-build: five
               width pieces sharing one kernel, docs/compiler.md "Width pieces")
  conv_64x128  the same convolution with the positions laid out 64 x 128
  conv3x3      a 3x3 "same" convolution 64 -> 64 on 64 x 64 (numpy: windows + one sgemm)
  tanh         eiln's Apple-compiled tanh kernel on 2560 x 1600 (../shared anec)
  add          eiln's add kernel: two 2560 x 1600 inputs through the planar engine
  softmax      eiln's softmax kernel: softmax of each 1600-value row of 2560 rows
  chain        the mlp example scaled up: conv 512 -> 512 + bias + ReLU, + a second input,
               sigmoid, on one row of 512 positions (five units, three tasks, two outputs;
               the element-wise add on the planar engine keeps it to one row that fits L2
               whole: its second source cannot be split by width)

usage: python3 bench/process/hwx_run_vs_numpy.py [BUILD_DIR] [--runs N] [--jobs a,b] [--pause S] [--keep DIR]
                                                 [--before OLD/hwx-run]
       (a python3 with numpy; BUILD_DIR defaults to build; the anec jobs need ../shared
       next to the repository, or LIBANE_SHARED_DIR)
"""
import argparse
import ctypes
import mmap
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("LIBANE_SHARED_DIR", ROOT.parent / "shared"))


@dataclass
class Job:
    hwx: list                 # hwx-run's argv
    numpy_job: Callable       # the job in this process: np.load ... np.save
    numpy_source: str         # the same job as a script, for the peak-memory process
    reads: list               # the files the job reads
    compute: Callable         # the job's arithmetic on fp32 arrays already in memory
    out_bytes: int            # bytes the job writes
    notes: list = field(default_factory=list)


# ---- plist text for hwx-build ----

def plist_xml(inputs, outputs, units, weights, body):
    strings = lambda xs: "".join(f"<string>{x}</string>" for x in xs)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Networks</key><array><string>net</string></array>
<key>net</key><dict>
<key>Inputs</key><array>{strings(inputs)}</array>
<key>Outputs</key><array>{strings(outputs)}</array>
<key>Units</key><array>{strings(units)}</array>
<key>Weights</key><array><string>{weights}</string></array>
{body}
</dict></dict></plist>
"""


def tensor(name, c, h, w):
    return (f"<key>{name}</key><dict><key>InputChannels</key><integer>{c}</integer><key>InputHeight</key>"
            f"<integer>{h}</integer><key>InputWidth</key><integer>{w}</integer><key>InputType</key>"
            f"<string>Float16</string></dict>")


def conv(name, bottom, cout, k=1, pad=0):
    pads = "".join(f"<key>Pad{s}</key><integer>{pad}</integer>" for s in ("Top", "Bot", "Left", "Right")) if pad else ""
    return (f"<key>{name}</key><dict><key>Bottom</key><string>{bottom}</string><key>Type</key><string>Conv</string>"
            f"<key>OutputChannels</key><integer>{cout}</integer><key>OutputType</key><string>Float16</string>"
            f"<key>Params</key><dict><key>KernelWidth</key><integer>{k}</integer><key>KernelHeight</key>"
            f"<integer>{k}</integer>{pads}<key>Step</key><array><integer>1</integer><integer>1</integer></array>"
            f"<key>KernelType</key><string>Float16</string><key>KernelOffset</key><integer>0</integer>"
            f"<key>Type</key><string>Conv</string></dict></dict>")


def output(unit):
    return f"<key>{unit}@output</key><dict><key>Bottom</key><string>{unit}</string></dict>"


class Skip(Exception):
    pass


def hwx_build(build, d, plist):
    (d / "net.plist").write_text(plist)
    r = subprocess.run([f"{build}/hwx-build", "-q", str(d / "net.plist"), "-o", str(d / "model.hwx")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "hwx-build failed")
    return str(d / "model.hwx")


def exec_job(source, d):
    """A job given as script text, run in this process (its own namespace)."""
    code = compile(source, "job.py", "exec")
    return lambda: exec(code, {"np": np, "d": str(d)})


# ---- the jobs ----

def make_conv1x1(h, w):
    def make(d, build):
        rng = np.random.default_rng(7)
        np.save(d / "x.npy", rng.uniform(-1, 1, (1, 512, h, w)).astype(np.float16))
        rng.uniform(-0.05, 0.05, (512, 512)).astype(np.float16).tofile(d / "w.weights")
        model = hwx_build(build, d, plist_xml(["x"], ["y@output"], ["y"], "w.weights",
                                              tensor("x", 512, h, w) + conv("y", "x", 512) + output("y")))
        src = f"""x = np.load(f"{{d}}/x.npy").astype(np.float32).reshape(512, -1)
w = np.fromfile(f"{{d}}/w.weights", dtype=np.float16).astype(np.float32).reshape(512, 512)
np.save(f"{{d}}/y.npy", (w @ x).reshape(1, 512, {h}, {w}).astype(np.float16))
"""
        x32 = np.load(d / "x.npy").astype(np.float32).reshape(512, -1)
        w32 = np.fromfile(d / "w.weights", dtype=np.float16).astype(np.float32).reshape(512, 512)
        y32 = np.empty((512, h * w), np.float32)
        return Job([f"{build}/hwx-run", model, "-i", f"x={d}/x.npy", "-o", str(d / "out")], exec_job(src, d), src,
                   [d / "x.npy", d / "w.weights"], lambda: np.matmul(w32, x32, out=y32), 2 * 512 * h * w,
                   ["floor: the sgemm 512 x 512 x %d" % (h * w)])
    return make


def make_conv3x3(d, build):
    rng = np.random.default_rng(7)
    np.save(d / "x.npy", rng.uniform(-1, 1, (1, 64, 64, 64)).astype(np.float16))
    rng.uniform(-0.1, 0.1, (64, 64, 3, 3)).astype(np.float16).tofile(d / "w.weights")
    model = hwx_build(build, d, plist_xml(["x"], ["y@output"], ["y"], "w.weights",
                                          tensor("x", 64, 64, 64) + conv("y", "x", 64, k=3, pad=1) + output("y")))
    src = """x = np.load(f"{d}/x.npy").astype(np.float32)[0]
w = np.fromfile(f"{d}/w.weights", dtype=np.float16).astype(np.float32).reshape(64, 576)
win = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (1, 1), (1, 1))), (3, 3), axis=(1, 2))
np.save(f"{d}/y.npy", (w @ win.transpose(0, 3, 4, 1, 2).reshape(576, 4096)).reshape(1, 64, 64, 64).astype(np.float16))
"""
    x = np.load(d / "x.npy").astype(np.float32)[0]
    win = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (1, 1), (1, 1))), (3, 3), axis=(1, 2))
    col = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2).reshape(576, 4096))
    w32 = np.fromfile(d / "w.weights", dtype=np.float16).astype(np.float32).reshape(64, 576)
    y32 = np.empty((64, 4096), np.float32)
    return Job([f"{build}/hwx-run", model, "-i", f"x={d}/x.npy", "-o", str(d / "out")], exec_job(src, d), src,
               [d / "x.npy", d / "w.weights"], lambda: np.matmul(w32, col, out=y32), 2 * 64 * 4096,
               ["floor: the sgemm 64 x 576 x 4096 (windows gathered beforehand)"])


def anec_job(kernel, inputs, expr, compute_of, note):
    """eiln's Apple-compiled `kernel` on [1,1,2560,1600] inputs (name -> (seed, lo, hi), bound to
    src0, src1, ... in order) against numpy evaluating `expr` on them in fp32."""
    def make(d, build):
        model = SHARED / "corpus/anec" / kernel
        if not model.exists():
            return None
        cmd = [f"{build}/hwx-run", str(model), "--descriptor", str(SHARED / "corpus/anec/MANIFEST.json")]
        loads, arrays = [], []
        for i, (name, (seed, lo, hi)) in enumerate(inputs.items()):
            x = np.random.default_rng(seed).uniform(lo, hi, (1, 1, 2560, 1600)).astype(np.float16)
            np.save(d / f"{name}.npy", x)
            arrays.append(x.astype(np.float32))
            cmd += ["-i", f"src{i}={d}/{name}.npy"]
            loads.append(f'{name} = np.load(f"{{d}}/{name}.npy").astype(np.float32)')
        src = "\n".join(loads) + f'\nnp.save(f"{{d}}/y.npy", ({expr}).astype(np.float16))\n'
        return Job(cmd + ["-o", str(d / "out")], exec_job(src, d), src, [d / f"{n}.npy" for n in inputs],
                   compute_of(*arrays), 2 * 2560 * 1600, [note])
    return make


def tanh_compute(x):
    y = np.empty_like(x)
    return lambda: np.tanh(x, out=y)


def add_compute(a, b):
    y = np.empty_like(a)
    return lambda: np.add(a, b, out=y)


def softmax_compute(x):
    y = np.empty_like(x)

    def run():
        np.subtract(x, x.max(axis=-1, keepdims=True), out=y)
        np.exp(y, out=y)
        np.divide(y, y.sum(axis=-1, keepdims=True), out=y)
    return run


def make_chain(d, build):
    h, w, n = 1, 512, 512
    rng = np.random.default_rng(7)
    np.save(d / "x.npy", rng.uniform(-1, 1, (1, 512, h, w)).astype(np.float16))
    np.save(d / "skip.npy", rng.uniform(-1, 1, (1, 512, h, w)).astype(np.float16))
    wts = rng.uniform(-0.05, 0.05, 512 * 512).astype(np.float16)
    bias = rng.uniform(-0.5, 0.5, 512).astype(np.float16)
    np.concatenate([wts, bias]).tofile(d / "w.weights")
    body = (tensor("x", 512, h, w) + tensor("skip", 512, h, w) + conv("fc", "x", 512)
            + "<key>fc_bias</key><dict><key>Bottom</key><string>fc</string><key>Type</key><string>GOC</string>"
              "<key>OutputChannels</key><integer>512</integer><key>Params</key><dict><key>BiasScaleGroupData</key>"
              "<dict><key>BiasCount</key><integer>512</integer><key>BiasIndex</key><integer>0</integer>"
              f"<key>BiasOffset</key><integer>{512 * 512 * 2}</integer><key>BiasType</key><string>Float16</string>"
              "</dict><key>Type</key><string>GOC</string></dict></dict>"
            + "<key>act</key><dict><key>Bottom</key><string>fc_bias</string><key>Type</key><string>Neuron</string>"
              "<key>Params</key><dict><key>Type</key><string>ReLU</string></dict></dict>"
            + "<key>res</key><dict><key>Bottom</key><array><string>act</string><string>skip</string></array>"
              "<key>Type</key><string>ElementWise</string><key>Params</key><dict><key>Type</key><string>Add</string>"
              "</dict></dict>"
            + "<key>prob</key><dict><key>Bottom</key><string>res</string><key>Type</key><string>Neuron</string>"
              "<key>Params</key><dict><key>Type</key><string>Sigmoid</string></dict></dict>"
            + output("prob") + output("act"))
    model = hwx_build(build, d, plist_xml(["x", "skip"], ["prob@output", "act@output"],
                                          ["fc", "fc_bias", "act", "res", "prob"], "w.weights", body))
    src = f"""x = np.load(f"{{d}}/x.npy").astype(np.float32).reshape(512, -1)
skip = np.load(f"{{d}}/skip.npy").astype(np.float32).reshape(512, -1)
wb = np.fromfile(f"{{d}}/w.weights", dtype=np.float16).astype(np.float32)
w, b = wb[:512 * 512].reshape(512, 512), wb[512 * 512:].reshape(512, 1)
act = np.maximum(w @ x + b, 0).astype(np.float16)
res = (act.astype(np.float32) + skip).astype(np.float16).astype(np.float32)
prob = (1 / (1 + np.exp(-res))).astype(np.float16)
np.save(f"{{d}}/act.npy", act.reshape(1, 512, {h}, {w}))
np.save(f"{{d}}/prob.npy", prob.reshape(1, 512, {h}, {w}))
"""
    x32 = np.load(d / "x.npy").astype(np.float32).reshape(512, n)
    s32 = np.load(d / "skip.npy").astype(np.float32).reshape(512, n)
    w32, b32 = wts.astype(np.float32).reshape(512, 512), bias.astype(np.float32).reshape(512, 1)
    y, z = np.empty((512, n), np.float32), np.empty((512, n), np.float32)

    def compute():
        np.matmul(w32, x32, out=y)
        np.add(y, b32, out=y)
        np.maximum(y, 0, out=y)
        np.add(y, s32, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        np.add(z, 1, out=z)
        np.reciprocal(z, out=z)
    cmd = [f"{build}/hwx-run", model, "-i", f"x={d}/x.npy", "-i", f"skip={d}/skip.npy", "-o", str(d / "out")]
    return Job(cmd, exec_job(src, d), src, [d / "x.npy", d / "skip.npy", d / "w.weights"], compute, 2 * 2 * 512 * n,
               ["floor: the sgemm 512 x 512 x 512 and the element-wise passes"])


JOBS = {
    "conv_1x8192": make_conv1x1(1, 8192),
    "conv_64x128": make_conv1x1(64, 128),
    "conv3x3": make_conv3x3,
    "tanh": anec_job("unary/tanh.bin", {"x": (7, -4, 4)}, "np.tanh(x)", tanh_compute, "floor: np.tanh"),
    "add": anec_job("binary/add.bin", {"a": (8, -100, 100), "b": (18, -100, 100)}, "a + b", add_compute,
                    "floor: np.add"),
    "softmax": anec_job("activation/softmax.bin", {"x": (10, -8, 8)},
                        "(lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max(-1, keepdims=True)))",
                        softmax_compute, "floor: max, subtract, exp, sum, divide along rows"),
    "chain": make_chain,
}


# ---- measuring ----

def timed_process(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_call(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def best(fn, runs):
    return min(timed_call(fn) for _ in range(runs))


def floor_seconds(job, runs):
    """Minimum read + compute + write, each part on its own."""
    read = best(lambda: [p.read_bytes() for p in job.reads], runs)
    compute = best(job.compute, runs)
    data = os.urandom(job.out_bytes)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.bin"
        write = best(lambda: out.write_bytes(data), runs)
    return read, compute, write


def peak_mib(cmd):
    """The peak RSS of one process (a fresh wrapper: RUSAGE_CHILDREN keeps the largest child)."""
    out = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; "
                          "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
                          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *cmd],
                         check=True, capture_output=True, text=True)
    return int(out.stdout) / 1024


def slot_mib(cmd):
    out = subprocess.run(cmd + ["--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["slot_bytes"] / 2**20


class MemoryNumpy:
    """numpy, except that load / fromfile return arrays held in memory and save keeps its array."""

    def __init__(self, files):
        self.files, self.saved = files, {}

    def __getattr__(self, name):
        return getattr(np, name)

    def load(self, path):
        return self.files[str(path)]

    def fromfile(self, path, dtype):
        return self.files[str(path)]

    def save(self, path, array):
        self.saved[str(path)] = array


def in_process_sides(job, libane):
    """(libane.run on the job's inputs, the job's numpy text on the same arrays), both in memory."""
    args = [str(a) for a in job.hwx]
    descriptor = args[args.index("--descriptor") + 1] if "--descriptor" in args else None
    program = libane.open(args[1], descriptor=descriptor) if descriptor else libane.open(args[1])
    inputs = {a.split("=", 1)[0]: np.load(a.split("=", 1)[1]) for i, a in enumerate(args) if args[i - 1] == "-i"}
    files = {str(p): np.load(p) if str(p).endswith(".npy") else np.fromfile(p, dtype=np.float16) for p in job.reads}
    code = compile(job.numpy_source, "job.py", "exec")
    d = str(Path(job.reads[0]).parent)
    return (lambda: libane.run(program, inputs)), (lambda: exec(code, {"np": MemoryNumpy(files), "d": d}))


def import_libane(build):
    sys.path.insert(0, str(Path(build) / "python"))
    try:
        import libane
        return libane
    except ImportError:
        return None


def fresh_huge_pages_ms(pages=4):
    """Milliseconds to first touch `pages` fresh 2 MiB pages advised for huge pages, or None.

    On virtual machines with free page reporting the host takes back free memory, and a
    huge page it must back again costs 6 - 7 ms instead of 0.2 ms (docs/simulator.md,
    "Streaming"). hwx-run touches about four per run (the pool's and OpenBLAS's), so this
    state moves its times. Sampled once before and once after each job's runs, never
    between them (pages given back here would be warm for the next process).
    """
    huge = 2 << 20
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        return None
    m = mmap.mmap(-1, (pages + 1) * huge, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        view = ctypes.c_char.from_buffer(m)
        offset = -ctypes.addressof(view) % huge
        del view
        m.madvise(mmap.MADV_HUGEPAGE, offset, pages * huge)
        start = time.perf_counter()
        for k in range(pages):
            m[offset + k * huge] = 1
        return (time.perf_counter() - start) * 1e3
    finally:
        m.close()


def stats(xs):
    return min(xs) * 1e3, statistics.median(xs) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=15, help="timed runs per side (default 15)")
    ap.add_argument("--jobs", default=",".join(JOBS), help="comma-separated, of: " + ", ".join(JOBS))
    ap.add_argument("--pause", type=float, default=0.3, help="seconds of quiet after each run (default 0.3)")
    ap.add_argument("--before", metavar="HWX_RUN", help="an earlier hwx-run binary, run interleaved with the "
                    "others on the same programs: its min / median and ratio print on a second line per job")
    ap.add_argument("--keep", metavar="DIR", help="build each job's files in DIR/<job> and keep them (for profiling "
                    "the printed hwx-run command)")
    args = ap.parse_args()
    unknown = [j for j in args.jobs.split(",") if j not in JOBS]
    if unknown:
        sys.exit(f"unknown job(s): {', '.join(unknown)} (jobs: {', '.join(JOBS)})")

    print(f"cores: {os.cpu_count()}, {args.runs} runs per side, alternating, {args.pause} s pause after each run")
    starts = [timed_process([sys.executable, "-c", "import numpy"]) for _ in range(max(5, args.runs // 3))]
    print("python3 start + import numpy: min %.1f ms, median %.1f ms (paid once by a numpy user; in no ratio)"
          % stats(starts))
    empty = [timed_process([f"{args.build}/hwx-run", "--help"]) for _ in range(max(5, args.runs // 3))]
    empty_min, empty_med = stats(empty)
    print(f"hwx-run --help as a process (its start and exit, no job): min {empty_min:.1f} ms, median {empty_med:.1f} ms "
          f"(column +start: hwx-run / (floor + this min))\n")
    head = (f"{'job':12} {'hwx-run min/med ms':>19} {'numpy min/med ms':>17} {'ratio med (min)':>16} "
            f"{'floor ms':>9} {'hwx/floor':>9} {'+start':>6} {'hwx-run MiB':>11} {'buffers':>8} {'numpy MiB':>9}")
    print(head)
    notes, in_process, page_ms = [], [], []
    libane = import_libane(args.build)
    for name in args.jobs.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            if args.keep:
                d = Path(args.keep) / name
                d.mkdir(parents=True, exist_ok=True)
            try:
                job = JOBS[name](d, args.build)
            except Skip as e:
                print(f"{name:12} skipped: {e}")
                continue
            if job is None:
                print(f"{name:12} skipped: the corpus file is not in {SHARED}")
                continue
            if args.keep:
                print(f"{name:12} $ {' '.join(map(str, job.hwx))}")
            page_ms.append(fresh_huge_pages_ms())  # before the warm-up, which takes any pages it gave back
            before = [args.before] + [str(a) for a in job.hwx[1:]] if args.before else None
            timed_process(job.hwx), timed_call(job.numpy_job)  # warm the page cache
            if before:
                timed_process(before)
            th, tn, tb = [], [], []
            for _ in range(args.runs):
                th.append(timed_process(job.hwx))
                time.sleep(args.pause)
                if before:
                    tb.append(timed_process(before))
                    time.sleep(args.pause)
                tn.append(timed_call(job.numpy_job))
                time.sleep(args.pause)
            page_ms.append(fresh_huge_pages_ms())
            read, compute, write = floor_seconds(job, args.runs)
            floor = (read + compute + write) * 1e3
            (h_min, h_med), (n_min, n_med) = stats(th), stats(tn)
            script = d / "job.py"
            script.write_text("import numpy as np\nd = %r\n" % str(d) + job.numpy_source)
            print(f"{name:12} {h_min:8.1f} / {h_med:7.1f} {n_min:7.1f} / {n_med:7.1f} "
                  f"{n_med / h_med:9.2f} ({n_min / h_min:4.2f}) {floor:9.1f} {h_med / floor:9.2f} "
                  f"{h_med / (floor + empty_min):6.2f} "
                  f"{peak_mib(job.hwx):11.0f} {slot_mib(job.hwx):8.0f} {peak_mib([sys.executable, str(script)]):9.0f}",
                  flush=True)
            if before:
                b_min, b_med = stats(tb)
                print(f"{'  before':12} {b_min:8.1f} / {b_med:7.1f} {'':17} {n_med / b_med:9.2f} ({n_min / b_min:4.2f}) "
                      f"{'':9} {b_med / floor:9.2f} {b_med / (floor + empty_min):6.2f} {peak_mib(before):11.0f}",
                      flush=True)
            notes.append(f"{name}: floor = read {read * 1e3:.1f} + compute {compute * 1e3:.1f} + write "
                         f"{write * 1e3:.1f} ms ({'; '.join(job.notes)})")
            if libane:
                run_libane, run_numpy = in_process_sides(job, libane)
                run_libane(), run_numpy()  # first calls: lazy imports, page cache
                tl, tm = [], []
                for _ in range(args.runs):
                    tl.append(timed_call(run_libane))
                    time.sleep(args.pause)
                    tm.append(timed_call(run_numpy))
                    time.sleep(args.pause)
                (l_min, l_med), (m_min, m_med) = stats(tl), stats(tm)
                in_process.append(f"{name:12} {l_min:8.1f} / {l_med:7.1f} {m_min:9.1f} / {m_med:7.1f} "
                                  f"{m_med / l_med:9.2f} ({m_min / l_min:4.2f})")
    print("\n" + "\n".join(notes))
    page_ms = sorted(t for t in page_ms if t is not None)
    if page_ms:
        print(f"\nfour fresh 2 MiB huge pages, first touch, before and after each job: min {page_ms[0]:.2f}, "
              f"median {statistics.median(page_ms):.2f}, max {page_ms[-1]:.2f} ms ({len(page_ms)} samples; about "
              f"1 ms is a quiet machine, 6 - 7 ms per page the host backing freed memory again, which an hwx-run "
              f"process meets too)")
    if libane:
        print(f"\nin process, arrays in memory (no file I/O):\n{'job':12} {'libane.run min/med ms':>21} "
              f"{'numpy min/med ms':>19} {'ratio med (min)':>16}")
        print("\n".join(in_process))
    else:
        print(f"\nin process: skipped (no libane module in {args.build}/python)")


if __name__ == "__main__":
    main()
