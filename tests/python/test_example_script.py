"""examples/python/compile_and_run.py runs and finds libane equal to numpy."""
import subprocess
import sys

from conftest import NETWORKS_DIR, SOURCE_DIR

SCRIPT = SOURCE_DIR / "examples" / "python" / "compile_and_run.py"


def test_example_script_passes():
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("max |difference| 0.0") == 2, r.stdout


def test_example_script_takes_the_plist_path(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), str(NETWORKS_DIR / "mlp" / "net.plist")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
