"""Every public function and class of the module, and every public method of its classes, has a docstring."""
import inspect
import pydoc

import libane
from conftest import NETWORKS_DIR


def public(obj):
    return [(n, getattr(obj, n)) for n in dir(obj) if not n.startswith("_")]


def test_run_has_help():
    assert libane.run.__doc__ and libane.run.__doc__.strip()
    text = pydoc.render_doc(libane.run)  # what help(libane.run) shows
    assert "trace" in text and "options" in text


def test_module_has_a_docstring():
    assert libane.__doc__ and libane.__doc__.strip()


def test_every_public_function_and_class_has_a_docstring():
    program = libane.compile(str(NETWORKS_DIR / "mlp" / "net.plist"))
    classes = {type(program), type(program.buffers[0]), type(program.tasks[0]), libane.Error}
    missing = []
    for name, obj in public(libane):
        if callable(obj):
            if not (obj.__doc__ or "").strip():
                missing.append(name)
            if inspect.isclass(obj):
                classes.add(obj)
    for cls in classes:
        for name, obj in public(cls):
            if callable(obj) and not (obj.__doc__ or "").strip():
                missing.append(f"{cls.__name__}.{name}")
    assert not missing, f"no docstring: {missing}"
    assert {"open", "parse", "compile", "run", "diff", "Error"} <= {n for n, _ in public(libane)}
