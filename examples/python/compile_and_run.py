"""Compile the example network mlp (conv 16->8 + bias + ReLU, add a second input, sigmoid) with libane,
run it on the simulator and check it against the same network computed with numpy from its weights.

usage: compile_and_run.py [path/to/mlp/net.plist]    exit status 1 when the results differ
"""
import plistlib
import sys
from pathlib import Path

import numpy as np

import libane

plist = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "../networks/mlp/net.plist")
net_dir = plist.parent
inputs = {f.stem: np.load(f) for f in sorted((net_dir / "inputs").glob("*.npy"))}

program = libane.compile(str(plist))
print("\n".join(t.summary for t in program.tasks))
# lut=ideal: the true sigmoid instead of Apple's interpolated table, so the results can be equal.
outs = libane.run(program, inputs, options={"lut": "ideal"})

# numpy: float64 math, rounded to float16 where a task writes memory (after ReLU, after the add, after sigmoid).
net = plistlib.loads(plist.read_bytes())["net"]
weights = np.fromfile(net_dir / net["Weights"][0], dtype="<f2").astype(np.float64)
cout, cin = net["fc"]["OutputChannels"], net["x"]["InputChannels"]
w_at = net["fc"]["Params"]["KernelOffset"] // 2
b_at = net["fc_bias"]["Params"]["BiasScaleGroupData"]["BiasOffset"] // 2
w = weights[w_at:w_at + cout * cin].reshape(cout, cin)  # [out channel, in channel]
x = inputs["x"].astype(np.float64).reshape(cin, -1)     # [channel, H*W]
act = np.maximum(w @ x + weights[b_at:b_at + cout, None], 0).astype(np.float16)
res = (act.astype(np.float64) + inputs["skip"].astype(np.float64).reshape(cout, -1)).astype(np.float16)
prob = (1 / (1 + np.exp(-res.astype(np.float64)))).astype(np.float16)

worst = 0.0
for name, want in (("act@output", act), ("prob@output", prob)):
    got = outs[name]
    diff = float(np.max(np.abs(got.astype(np.float64).ravel() - want.astype(np.float64).ravel())))
    worst = max(worst, diff)
    print(f"{name} {list(got.shape)}, first values\n  libane: {got.ravel()[:8]}\n  numpy:  {want.ravel()[:8]}\n"
          f"  max |difference| {diff}")
sys.exit(0 if worst == 0 else 1)
