#!/usr/bin/env bash
# The whole hwx-run process against numpy doing the same job, side by side:
# a 3x3 "same" convolution 64 -> 64 on a 64x64 fp16 image (hwx-build compiles
# it once; each timed run loads the program and the .npy input, simulates, and
# writes the .npy output), and a numpy script that loads the same input and
# weights, convolves (sliding windows + one matmul in float32) and saves.
# Prints the mean wall time per process over RUNS runs (default 20).
#
#   bash bench/process/conv3x3.sh [BUILD_DIR]      (needs python3 with numpy)
set -euo pipefail
build=${1:-build}
runs=${RUNS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
np.save(f"{d}/x.npy", rng.uniform(-1, 1, (1, 64, 64, 64)).astype(np.float16))
rng.uniform(-0.1, 0.1, (64, 64, 3, 3)).astype(np.float16).tofile(f"{d}/w.weights")
open(f"{d}/net.plist", "w").write("""<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Networks</key><array><string>net</string></array>
<key>net</key><dict>
<key>Inputs</key><array><string>x</string></array>
<key>Outputs</key><array><string>y@output</string></array>
<key>Units</key><array><string>y</string></array>
<key>Weights</key><array><string>w.weights</string></array>
<key>x</key><dict><key>InputChannels</key><integer>64</integer><key>InputHeight</key><integer>64</integer>
<key>InputWidth</key><integer>64</integer><key>InputType</key><string>Float16</string></dict>
<key>y</key><dict><key>Bottom</key><string>x</string><key>Type</key><string>Conv</string>
<key>OutputChannels</key><integer>64</integer><key>OutputType</key><string>Float16</string>
<key>Params</key><dict><key>KernelWidth</key><integer>3</integer><key>KernelHeight</key><integer>3</integer>
<key>PadTop</key><integer>1</integer><key>PadBot</key><integer>1</integer><key>PadLeft</key><integer>1</integer>
<key>PadRight</key><integer>1</integer><key>Step</key><array><integer>1</integer><integer>1</integer></array>
<key>KernelType</key><string>Float16</string><key>Type</key><string>Conv</string></dict></dict>
<key>y@output</key><dict><key>Bottom</key><string>y</string></dict>
</dict></dict></plist>
""")
open(f"{d}/conv.py", "w").write("""import sys, numpy as np
d = sys.argv[1]
x = np.load(f"{d}/x.npy").astype(np.float32)[0]
w = np.fromfile(f"{d}/w.weights", dtype=np.float16).astype(np.float32).reshape(64, 576)
p = np.pad(x, ((0, 0), (1, 1), (1, 1)))
win = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(1, 2))   # [c, h, w, 3, 3]
col = win.transpose(0, 3, 4, 1, 2).reshape(576, 64 * 64)
np.save(f"{d}/y.npy", (w @ col).reshape(1, 64, 64, 64).astype(np.float16))
""")
PY
"$build/hwx-build" "$work/net.plist" -o "$work/conv.hwx" -q
time_runs() {
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$runs"); do "$@" > /dev/null; done
  end=$(date +%s.%N)
  python3 -c "print(f'{($end - $start) / $runs * 1000:.1f} ms')"
}
echo "hwx-run (load, simulate, write .npy): $(time_runs "$build/hwx-run" "$work/conv.hwx" -i "x=$work/x.npy" -o "$work/out")"
echo "numpy   (load, convolve, save .npy):  $(time_runs python3 "$work/conv.py" "$work")"
python3 - "$work" <<'PY'
import sys, numpy as np
d = sys.argv[1]
a = np.load(f"{d}/out/y@output.npy").astype(np.float32); b = np.load(f"{d}/y.npy").astype(np.float32)
print(f"max |hwx-run - numpy| = {np.abs(a - b).max():.3g} (fp16 outputs of fp32 sums)")
PY
