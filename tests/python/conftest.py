"""Shared helpers for the tests of the Python module `libane`.

Everything is found through the environment that ctest sets:
  PYTHONPATH         the built module (`import libane`)
  LIBANE_SOURCE_DIR  the repository root (examples/networks/*)
  LIBANE_SHARED_DIR  the directory holding corpus/ (Apple-compiled files); may be missing
  HWX_DUMP, HWX_BUILD, HWX_RUN  the command-line tools the module must agree with
Without the corpus its tests are skipped with a reason; with CI=true they fail instead.
"""
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

SOURCE_DIR = Path(os.environ.get("LIBANE_SOURCE_DIR") or Path(__file__).resolve().parents[2])
NETWORKS_DIR = SOURCE_DIR / "examples" / "networks"
NETWORKS = sorted(p.parent.name for p in NETWORKS_DIR.glob("*/net.plist"))

_shared = os.environ.get("LIBANE_SHARED_DIR")
CORPUS = Path(_shared) / "corpus" if _shared else None
HAVE_CORPUS = CORPUS is not None and CORPUS.is_dir()

# Absolute now, so that tests may change the working directory.
TOOLS = {t: os.path.abspath(os.environ[t]) for t in ("HWX_DUMP", "HWX_BUILD", "HWX_RUN") if os.environ.get(t)}


def need_corpus():
    """Skips the calling test when the corpus is missing (fails it when CI=true)."""
    if HAVE_CORPUS:
        return CORPUS
    reason = (f"corpus not found: {CORPUS} is not a directory" if _shared else
              "corpus not found: LIBANE_SHARED_DIR (the directory holding corpus/) is not set")
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true: the corpus is required)")
    pytest.skip(reason)


def corpus_params(pattern):
    """Corpus files matching `pattern` (relative to corpus/) as test parameters.
    Without the corpus: one parameter, None, so that the test runs and calls need_corpus()."""
    if not HAVE_CORPUS:
        return [pytest.param(None, id="no-corpus")]
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob(pattern))
    assert files, f"no {pattern} in {CORPUS}"
    return files


def tool(name, *args, cwd=None):
    """Runs HWX_DUMP / HWX_BUILD / HWX_RUN with `args`; returns the CompletedProcess (text)."""
    if name not in TOOLS:
        pytest.fail(f"environment variable {name} (path of the executable) is not set")
    return subprocess.run([TOOLS[name], *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def tool_ok(name, *args, cwd=None):
    """Runs a tool that must succeed; returns its stdout."""
    r = tool(name, *args, cwd=cwd)
    assert r.returncode == 0, f"{name} {args}: exit {r.returncode}: {r.stderr}"
    return r.stdout


def tool_error(name, *args, cwd=None):
    """Runs a tool that must fail with status 2; returns its one-line message
    without the 'hwx-xxx: ' prefix and the trailing newline."""
    r = tool(name, *args, cwd=cwd)
    assert r.returncode == 2, f"{name} {args}: expected exit 2, got {r.returncode}: {r.stderr}"
    prefix = Path(TOOLS[name]).name + ": "
    assert r.stderr.startswith(prefix) and r.stderr.endswith("\n") and r.stderr.count("\n") == 1, r.stderr
    return r.stderr[len(prefix):-1]


def dump_json(path, *args):
    """json.loads of `hwx-dump --json [args] path`."""
    return json.loads(tool_ok("HWX_DUMP", "--json", *args, path))


def network_inputs(net):
    """{input name: array} from examples/networks/<net>/inputs/<name>.npy."""
    return {f.stem: np.load(f) for f in sorted((NETWORKS_DIR / net / "inputs").glob("*.npy"))}


def npy_name(name):
    """The file name hwx-run writes (and --expect reads) for an output: [A-Za-z0-9_.@-] kept."""
    return (re.sub(r"[^A-Za-z0-9_.@-]", "_", name) or "_") + ".npy"


def max_difference(got, want):
    """Largest |got - want| over float64 values, as hwx-run --expect computes it (NaN == NaN)."""
    g = np.asarray(got, dtype=np.float64).ravel()
    w = np.asarray(want, dtype=np.float64).ravel()
    assert g.size == w.size, (g.size, w.size)
    d = np.where(np.isnan(g) & np.isnan(w), 0.0, np.abs(g - w))
    return float(np.max(d, initial=0.0)) if not np.isnan(d).any() else float("nan")


@pytest.fixture(scope="session")
def mlp_hwx(tmp_path_factory):
    """examples/networks/mlp compiled by hwx-build into a file: (path as str, inputs)."""
    path = str(tmp_path_factory.mktemp("mlp") / "mlp.hwx")
    tool_ok("HWX_BUILD", NETWORKS_DIR / "mlp" / "net.plist", "-o", path, "--ident", "x")
    return path, network_inputs("mlp")
