"""hwx-run as a whole process against numpy doing the same job, side by side.

Each job is one program run by `hwx-run MODEL -i ... -o OUTDIR` and one Python
script doing what a numpy user would (load the .npy input, convert fp16 to
fp32, compute, convert back, save the .npy) as its own process. Runs alternate
between the two (warm cache), and the median wall time of each is reported with
the ratio numpy / hwx-run: above 1, hwx-run is the faster. Peak memory (max
RSS) of each process is printed too.

Jobs:
  conv1x1   a 512 -> 512 1x1 convolution over 8192 positions (64 x 128),
            512 KiB of fp16 weights, an 8 MiB fp16 input (hwx-build compiles it)
  gemm      the corpus gemm.hwx (512 -> 512 on one position; ../shared)
  chain     the mlp example's network scaled up: conv 512 -> 512 + bias + ReLU,
            + a second input, sigmoid, on one row of 256 (three tasks, two outputs)
  tanh      eiln's Apple-compiled tanh kernel on 2560 x 1600 (../shared anec)
  add       eiln's add kernel: two 2560 x 1600 inputs through the planar engine
  sigmoid   eiln's sigmoid kernel: a table task into L2, then a planar-engine task
  tanh_built  the tanh job from a one-layer plist compiled by hwx-build

usage: python3 bench/process/hwx_run_vs_numpy.py [BUILD_DIR] [--runs N] [--jobs a,b]
       (a python3 with numpy; BUILD_DIR defaults to build; the corpus jobs need
       ../shared next to the repository, or LIBANE_SHARED_DIR)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("LIBANE_SHARED_DIR", ROOT.parent / "shared"))


def plist_xml(net_name, inputs, outputs, units, weights, body):
    keys = "".join(f"<string>{u}</string>" for u in units)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Networks</key><array><string>{net_name}</string></array>
<key>{net_name}</key><dict>
<key>Inputs</key><array>{"".join(f"<string>{i}</string>" for i in inputs)}</array>
<key>Outputs</key><array>{"".join(f"<string>{o}</string>" for o in outputs)}</array>
<key>Units</key><array>{keys}</array>
<key>Weights</key><array><string>{weights}</string></array>
{body}
</dict></dict></plist>
"""


def tensor(name, c, h, w):
    return (f"<key>{name}</key><dict><key>InputChannels</key><integer>{c}</integer><key>InputHeight</key>"
            f"<integer>{h}</integer><key>InputWidth</key><integer>{w}</integer><key>InputType</key>"
            f"<string>Float16</string></dict>")


def conv(name, bottom, cout, kernel_offset=0):
    return (f"<key>{name}</key><dict><key>Bottom</key><string>{bottom}</string><key>Type</key><string>Conv</string>"
            f"<key>OutputChannels</key><integer>{cout}</integer><key>OutputType</key><string>Float16</string>"
            f"<key>Params</key><dict><key>KernelWidth</key><integer>1</integer><key>KernelHeight</key><integer>1"
            f"</integer><key>Step</key><array><integer>1</integer><integer>1</integer></array><key>KernelType</key>"
            f"<string>Float16</string><key>KernelOffset</key><integer>{kernel_offset}</integer><key>Type</key>"
            f"<string>Conv</string></dict></dict>")


def make_conv1x1(d, build):
    rng = np.random.default_rng(7)
    np.save(d / "x.npy", rng.uniform(-1, 1, (1, 512, 64, 128)).astype(np.float16))
    rng.uniform(-0.05, 0.05, (512, 512)).astype(np.float16).tofile(d / "w.weights")
    body = tensor("x", 512, 64, 128) + conv("y", "x", 512) + "<key>y@output</key><dict><key>Bottom</key><string>y</string></dict>"
    (d / "net.plist").write_text(plist_xml("net", ["x"], ["y@output"], ["y"], "w.weights", body))
    subprocess.run([f"{build}/hwx-build", "-q", str(d / "net.plist"), "-o", str(d / "model.hwx")], check=True)
    (d / "job.py").write_text("""import sys, numpy as np
d = sys.argv[1]
x = np.load(f"{d}/x.npy").astype(np.float32).reshape(512, -1)
w = np.fromfile(f"{d}/w.weights", dtype=np.float16).astype(np.float32).reshape(512, 512)
np.save(f"{d}/out.npy", (w @ x).reshape(1, 512, 64, 128).astype(np.float16))
""")
    return [f"{build}/hwx-run", str(d / "model.hwx"), "-i", f"x={d}/x.npy", "-o", str(d / "out")]


def make_gemm(d, build):
    model = SHARED / "corpus/hwx/gemm.hwx"
    weights = SHARED / "corpus/pairs/gemm/zero.weights"
    if not model.exists() or not weights.exists():
        return None
    np.save(d / "x.npy", np.random.default_rng(7).uniform(-1, 1, (1, 512, 1, 1)).astype(np.float16))
    (d / "job.py").write_text(f"""import sys, numpy as np
d = sys.argv[1]
x = np.load(f"{{d}}/x.npy").astype(np.float32).reshape(512, 1)
w = np.fromfile("{weights}", dtype=np.float16)[:512 * 512].astype(np.float32).reshape(512, 512)
np.save(f"{{d}}/out.npy", (w @ x).reshape(1, 512, 1, 1).astype(np.float16))
""")
    return [f"{build}/hwx-run", str(model), "-i", f"image={d}/x.npy", "-o", str(d / "out")]


def make_chain(d, build):
    rng = np.random.default_rng(7)
    np.save(d / "x.npy", rng.uniform(-1, 1, (1, 512, 1, 256)).astype(np.float16))
    np.save(d / "skip.npy", rng.uniform(-1, 1, (1, 512, 1, 256)).astype(np.float16))
    w = rng.uniform(-0.05, 0.05, 512 * 512).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, 512).astype(np.float16)
    np.concatenate([w, b]).tofile(d / "w.weights")
    body = (tensor("x", 512, 1, 256) + tensor("skip", 512, 1, 256) + conv("fc", "x", 512)
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
            + "<key>prob@output</key><dict><key>Bottom</key><string>prob</string></dict>"
            + "<key>act@output</key><dict><key>Bottom</key><string>act</string></dict>")
    (d / "net.plist").write_text(plist_xml("net", ["x", "skip"], ["prob@output", "act@output"],
                                           ["fc", "fc_bias", "act", "res", "prob"], "w.weights", body))
    subprocess.run([f"{build}/hwx-build", "-q", str(d / "net.plist"), "-o", str(d / "model.hwx")], check=True)
    (d / "job.py").write_text("""import sys, numpy as np
d = sys.argv[1]
x = np.load(f"{d}/x.npy").astype(np.float32).reshape(512, -1)
skip = np.load(f"{d}/skip.npy").astype(np.float32).reshape(512, -1)
wb = np.fromfile(f"{d}/w.weights", dtype=np.float16).astype(np.float32)
w, b = wb[:512 * 512].reshape(512, 512), wb[512 * 512:].reshape(512, 1)
act = np.maximum(w @ x + b, 0).astype(np.float16)
res = (act.astype(np.float32) + skip).astype(np.float16).astype(np.float32)
prob = (1 / (1 + np.exp(-res))).astype(np.float16)
np.save(f"{d}/act.npy", act.reshape(1, 512, 1, 256))
np.save(f"{d}/prob.npy", prob.reshape(1, 512, 1, 256))
""")
    return [f"{build}/hwx-run", str(d / "model.hwx"), "-i", f"x={d}/x.npy", "-i", f"skip={d}/skip.npy",
            "-o", str(d / "out")]


def anec_job(d, build, kernel, inputs, expr):
    """eiln's Apple-compiled `kernel` on [1,1,2560,1600] inputs (name -> (seed, lo, hi),
    bound to src0, src1, ... in order) against numpy evaluating `expr` on them (fp32)."""
    model = SHARED / "corpus/anec" / kernel
    if not model.exists():
        return None
    cmd = [f"{build}/hwx-run", str(model), "--descriptor", str(SHARED / "corpus/anec/MANIFEST.json")]
    loads = []
    for i, (name, (seed, lo, hi)) in enumerate(inputs.items()):
        x = np.random.default_rng(seed).uniform(lo, hi, (1, 1, 2560, 1600)).astype(np.float16)
        np.save(d / f"{name}.npy", x)
        cmd += ["-i", f"src{i}={d}/{name}.npy"]
        loads.append(f'{name} = np.load(f"{{d}}/{name}.npy").astype(np.float32)')
    (d / "job.py").write_text("import sys, numpy as np\nd = sys.argv[1]\n" + "\n".join(loads) +
                              f'\nnp.save(f"{{d}}/out.npy", ({expr}).astype(np.float16))\n')
    return cmd + ["-o", str(d / "out")]


def make_tanh(d, build):
    return anec_job(d, build, "unary/tanh.bin", {"x": (7, -4, 4)}, "np.tanh(x)")


def make_add(d, build):
    return anec_job(d, build, "binary/add.bin", {"a": (8, -100, 100), "b": (18, -100, 100)}, "a + b")


def make_sigmoid(d, build):
    return anec_job(d, build, "unary/sigmoid.bin", {"x": (9, -8, 8)}, "1 / (1 + np.exp(-x))")


def make_tanh_built(d, build):
    """The tanh job as a user would build it: one Neuron layer compiled by hwx-build."""
    net = tensor("x", 1, 2560, 1600) + (
        "<key>y</key><dict><key>Bottom</key><string>x</string><key>Type</key><string>Neuron</string>"
        "<key>Params</key><dict><key>Type</key><string>Tanh</string></dict></dict>"
        "<key>y@output</key><dict><key>Bottom</key><string>y</string></dict>")
    (d / "net.plist").write_text(plist_xml("net", ["x"], ["y@output"], ["y"], "none.weights", net))
    subprocess.run([f"{build}/hwx-build", str(d / "net.plist"), "-o", str(d / "model.hwx")], check=True,
                   stdout=subprocess.DEVNULL)
    np.save(d / "x.npy", np.random.default_rng(7).uniform(-4, 4, (1, 1, 2560, 1600)).astype(np.float16))
    (d / "job.py").write_text("""import sys, numpy as np
d = sys.argv[1]
np.save(f"{d}/out.npy", np.tanh(np.load(f"{d}/x.npy").astype(np.float32)).astype(np.float16))
""")
    return [f"{build}/hwx-run", str(d / "model.hwx"), "-i", f"x={d}/x.npy", "-o", str(d / "out")]


JOBS = {"conv1x1": make_conv1x1, "gemm": make_gemm, "chain": make_chain, "tanh": make_tanh, "add": make_add,
        "sigmoid": make_sigmoid, "tanh_built": make_tanh_built}


def timed(cmd):
    """Wall seconds of one process."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def peak_mib(cmd):
    """The process's peak RSS, from a fresh interpreter (RUSAGE_CHILDREN keeps
    the largest child ever waited for)."""
    out = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; "
                          "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
                          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *cmd],
                         check=True, capture_output=True, text=True)
    return int(out.stdout) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--jobs", default=",".join(JOBS))
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}, runs per side: {args.runs} (alternating, warm cache)")
    print(f"{'job':8} {'hwx-run ms':>11} {'numpy ms':>9} {'numpy/hwx-run':>14} {'hwx-run MiB':>12} {'numpy MiB':>10}")
    for name in args.jobs.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            hwx = JOBS[name](d, args.build)
            if hwx is None:
                print(f"{name:8} skipped: the corpus file is not in {SHARED}")
                continue
            job = [sys.executable, str(d / "job.py"), str(d)]
            timed(hwx), timed(job)  # warm the page cache and the interpreter's files
            th, tn = [], []
            for _ in range(args.runs):
                th.append(timed(hwx))
                tn.append(timed(job))
            mh, mn = statistics.median(th) * 1e3, statistics.median(tn) * 1e3
            print(f"{name:8} {mh:11.1f} {mn:9.1f} {mn / mh:14.2f} {peak_mib(hwx):12.0f} {peak_mib(job):10.0f}")


if __name__ == "__main__":
    main()
