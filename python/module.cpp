// The Python module `libane`: programs, dumps, diff, compiler and simulator
// over numpy arrays. It only converts between Python and the C++ API
// (include/ane/): every rule, message and check lives in the library, so
// Python and the CLIs behave alike. Errors raise libane.Error with the
// message the CLIs print, without their "hwx-xxx: " prefix.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <span>

#include "ane/compiler.h"
#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/hwx.h"
#include "ane/memory.h"
#include "ane/mil_network.h"
#include "ane/network.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sim.h"

namespace py = pybind11;

namespace {

// libane.Error, created at import and kept for the interpreter's lifetime (a
// global py::object would be released after the interpreter is gone).
PyObject* error_type = nullptr;

// Library text as a Python str. Names and dumps of a hostile file may hold
// bytes that are not UTF-8: they become U+FFFD, as in hwx-dump --json.
py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

[[noreturn]] void raise(const std::string& message) {
  PyErr_SetObject(error_type, text(message).ptr());
  throw py::error_already_set();
}

std::string located(const std::string& where, const ane::Error& e) {
  return where.empty() ? e.str() : where + ": " + e.str();
}

template <typename T>
T take(ane::Expected<T> e, const std::string& where) {
  if (!e) raise(located(where, e.error()));
  return std::move(e).value();
}

void check(const ane::Status& s, const std::string& where) {
  if (!s) raise(located(where, s.error()));
}

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

// A program and the bytes it came from (to_bytes and save give them back).
struct PyProgram {
  ane::Program program;
  ane::Bytes bytes;
};
using ProgramRef = std::shared_ptr<const PyProgram>;

std::optional<ane::ContainerFormat> format_of(const std::optional<std::string>& f) {
  if (!f) return std::nullopt;
  if (*f == "hwx") return ane::ContainerFormat::Hwx;
  if (*f == "anec") return ane::ContainerFormat::Anec;
  raise("format '" + *f + "': expected 'hwx' or 'anec'");
}

ProgramRef parse(ane::Bytes bytes, const std::string& path, const ane::OpenOptions& opts) {
  auto p = std::make_shared<PyProgram>();
  ane::Expected<ane::Program> parsed = ane::make_error("");
  {
    py::gil_scoped_release unlocked;
    parsed = ane::parse_program(bytes, path, opts);
  }
  p->program = take(std::move(parsed), path);
  p->bytes = std::move(bytes);
  return p;
}

ane::OpenOptions open_options(const std::optional<std::string>& format, const std::optional<std::string>& descriptor,
                              const std::optional<std::string>& entry) {
  ane::OpenOptions o;
  o.format = format_of(format);
  o.descriptor_path = descriptor.value_or("");
  o.descriptor_entry = entry.value_or("");
  return o;
}

ProgramRef open_file(const std::string& path, const std::optional<std::string>& format,
                     const std::optional<std::string>& descriptor, const std::optional<std::string>& entry) {
  const ane::OpenOptions opts = open_options(format, descriptor, entry);
  return parse(take(ane::read_file(path), path), path, opts);
}

ProgramRef parse_bytes(const py::bytes& data, const std::string& path, const std::optional<std::string>& format) {
  const std::string_view view = data;
  return parse(ane::Bytes(view.begin(), view.end()), path, open_options(format, std::nullopt, std::nullopt));
}

ProgramRef compile(const std::string& model, const std::optional<std::string>& weights,
                   const std::optional<std::string>& ident, const std::optional<std::string>& compiler) {
  std::optional<ane::CompilerProfile> named;
  if (compiler) {
    named = ane::compiler_profile_of_name(*compiler);
    if (!named) raise("compiler '" + *compiler + "': expected 'v4.2.1' or 'macos26'");
  }
  ane::CompileOptions copts;
  copts.output_path = ane::default_output_name(model);  // as hwx-build names its output
  copts.ident = ident.value_or("");
  if (copts.ident.find('\0') != std::string::npos) raise("ident text contains a NUL byte");
  ane::Expected<ane::CompiledProgram> compiled = ane::make_error("");
  {
    py::gil_scoped_release unlocked;
    ane::ModelKind kind = ane::ModelKind::Unknown;
    auto net = ane::load_model(model, ane::ModelOptions{weights.value_or("")}, &kind);
    // As hwx-build: macos26 for Core ML input, v4.2.1 for plists, unless named.
    copts.profile = named.value_or(ane::default_compiler_profile(kind));
    compiled = net ? ane::compile_network(*net, copts) : ane::Expected<ane::CompiledProgram>(net.error());
  }
  ane::CompiledProgram c = take(std::move(compiled), "");
  return parse(std::move(c.bytes), copts.output_path, {});
}

py::object nchw_tuple(const std::array<uint64_t, 4>& v) { return py::make_tuple(v[0], v[1], v[2], v[3]); }

// ---- tasks ------------------------------------------------------------------------
struct PyTask {
  ProgramRef owner;
  size_t index;
  const ane::Task& task() const { return owner->program.tasks[index]; }
};

uint32_t field_value(const PyTask& t, const std::string& name) {
  const ane::FieldInfo* f = t.task().regs.database().find(name);
  if (!f)
    throw py::key_error("no register field '" + name + "' on " + ane::generation_name(t.task().generation) +
                        " (names as hwx-dump prints them: Block.Register.Field)");
  return t.task().regs.get(*f);
}

py::dict task_fields(const PyTask& t) {
  py::dict d;
  for (const ane::FieldInfo& f : t.task().regs.database().fields())
    if (t.task().regs.field_written(f)) d[py::str(f.name)] = t.task().regs.get(f);
  return d;
}

// ---- the simulator ----------------------------------------------------------------
// Sets an input from a numpy array without a copy of its own: float16 or
// C-contiguous float32 values go straight from the array's memory into the
// slot (any other layout is made contiguous first).
ane::Status set_input(ane::sim::Simulator& sim, const std::string& where, const std::string& name,
                      const py::handle& value) {
  py::array a = py::array::ensure(value);
  if (!a) raise(where + ": input '" + name + "': expected a numpy array of float16 or float32");
  const std::string dtype = py::str(a.dtype());
  if (dtype != "float16" && dtype != "float32")
    raise(where + ": input '" + name + "': dtype " + dtype + ", expected float16 or float32");
  if (static_cast<uint64_t>(a.size()) > UINT32_MAX) raise(where + ": input '" + name + "': more than 2^32 elements");
  const bool f16 = dtype == "float16";
  py::array c = f16 ? py::array(py::array_t<uint16_t, py::array::c_style | py::array::forcecast>::ensure(
                          a.attr("view")("uint16")))
                    : py::array(py::array_t<float, py::array::c_style>::ensure(a));
  const auto* bytes = static_cast<const std::byte*>(c.data());
  return sim.set_input(name, f16 ? ane::npy::Dtype::F16 : ane::npy::Dtype::F32,
                       std::span<const std::byte>(bytes, static_cast<size_t>(c.nbytes())));
}

ane::sim::Options sim_options(const py::object& options, const std::vector<std::string>& assume) {
  ane::sim::Options opts;
  std::vector<std::string> settings;
  if (py::isinstance<py::dict>(options)) {
    for (auto [k, v] : options.cast<py::dict>())
      settings.push_back(py::str(k).cast<std::string>() + "=" + py::str(v).cast<std::string>());
  } else if (!options.is_none()) {
    settings = options.cast<std::vector<std::string>>();
  }
  for (const auto& s : settings) check(ane::sim::apply_option(opts, s), "option");
  for (const auto& a : assume) check(ane::sim::apply_option(opts, a), "assume");
  return opts;
}

py::object run(const ProgramRef& p, const py::dict& inputs, bool trace, const py::object& options,
               const std::vector<std::string>& assume) {
  const std::string& path = p->program.path;
  auto sim = take(ane::sim::Simulator::create(p->program, sim_options(options, assume)), path);
  for (auto [k, v] : inputs) {
    const std::string name = py::str(k);
    check(set_input(sim, path, name, v), path);
  }
  check(sim.check_inputs(), path);
  std::vector<ane::sim::TraceRecord> records;
  ane::Status ran = ane::Ok{};
  {
    py::gil_scoped_release unlocked;
    ran = sim.run(trace ? ane::sim::TraceHook([&](const ane::sim::TraceRecord& r) { records.push_back(r); })
                        : ane::sim::TraceHook());
  }
  check(ran, path);
  sim.machine().release_working_memory();  // the outputs are in the slots now
  py::dict outs;
  for (const auto& b : sim.outputs()) {
    // Gathered straight into the array handed back.
    const auto shape = b.shape();
    if (!shape) raise(path + ": output '" + b.name + "' has no shape");
    py::array_t<uint16_t> bits({shape->nchw[0], shape->nchw[1], shape->nchw[2], shape->nchw[3]});
    check(sim.read_buffer(b.name, std::span<uint16_t>(bits.mutable_data(), static_cast<size_t>(bits.size()))), path);
    outs[text(b.name)] = bits.attr("view")("float16");
  }
  if (!trace) return outs;
  py::list rs;
  for (const auto& r : records) {
    py::dict d = json_loads(r.json());
    d["line"] = text(r.line());
    rs.append(d);
  }
  return py::make_tuple(outs, rs);
}

}  // namespace

PYBIND11_MODULE(libane, m) {
  m.doc() =
      "libane: Apple Neural Engine (H13 / M1) programs from Python.\n\n"
      "Open .hwx files and anec images (open, parse), read their buffers, tasks and\n"
      "register fields, dump and diff them as hwx-dump does, compile ANECompiler\n"
      "network plists and Core ML MIL as hwx-build does (compile), and execute programs on the\n"
      "register-level simulator with numpy arrays in and out (run).\n\n"
      "    p = libane.compile('net.plist')\n"
      "    outs = libane.run(p, {'x': x})          # dict name -> float16 [N,C,H,W]\n\n"
      "Every failure raises libane.Error with the one-line message the CLIs print.";
  error_type = PyErr_NewExceptionWithDoc("libane.Error",
                                         "A libane failure: the one-line message names the file, offset or buffer "
                                         "and the problem, as the hwx-* tools print it.",
                                         nullptr, nullptr);
  if (!error_type) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_borrow<py::object>(error_type);

  py::class_<ane::Buffer>(m, "Buffer", "A named tensor of a program: where it lives and its NCHW layout.")
      .def_property_readonly("name", [](const ane::Buffer& b) { return text(b.name); }, "The buffer's name.")
      .def_property_readonly(
          "direction", [](const ane::Buffer& b) { return std::string(ane::direction_name(b.direction)); },
          "'input', 'output' or 'unknown'.")
      .def_readonly("slot", &ane::Buffer::slot, "The base-address slot holding it.")
      .def_readonly("address", &ane::Buffer::address, "Program address of element 0.")
      .def_readonly("offset", &ane::Buffer::offset, "Byte offset of element 0 in its slot.")
      .def_readonly("size", &ane::Buffer::size, "Bytes reserved for it.")
      .def_property_readonly(
          "shape", [](const ane::Buffer& b) { return b.layout ? nchw_tuple(b.layout->nchw) : py::none(); },
          "(N, C, H, W), or None when the file gives no shape.")
      .def_property_readonly(
          "strides", [](const ane::Buffer& b) { return b.layout ? nchw_tuple(b.layout->strides) : py::none(); },
          "Byte strides of N, C, H, W, or None.")
      .def_property_readonly(
          "dtype",
          [](const ane::Buffer& b) -> py::object {
            if (!b.layout) return py::none();
            return py::str(ane::element_type_name(b.layout->type));
          },
          "The element type ('float16'), or None.")
      .def("__repr__", [](const ane::Buffer& b) {
        return text("<libane.Buffer '" + b.name + "' " + ane::direction_name(b.direction) + " slot " +
                    std::to_string(b.slot) + ">");
      });

  py::class_<PyTask>(m, "Task", "One task descriptor: its register fields by name (Block.Register.Field).")
      .def_property_readonly("index", [](const PyTask& t) { return t.task().index; }, "Position in the chain.")
      .def_property_readonly(
          "target", [](const PyTask& t) { return std::string(ane::generation_info(t.task().generation).target); },
          "The generation whose register table names its fields ('h13', 'h16', ...).")
      .def(
          "written",
          [](const PyTask& t) {
            py::dict d;
            for (const auto& [addr, value] : t.task().regs.written_words()) d[py::int_(addr)] = value;
            return d;
          },
          "Every register word the task writes, as a dict address -> value (absent = not written).")
      .def("__getitem__", &field_value, py::arg("field"),
           "The value of one register field, e.g. t['Common.InDim.Win'] (KeyError for an unknown name).")
      .def(
          "__contains__",
          [](const PyTask& t, const std::string& name) {
            const ane::FieldInfo* f = t.task().regs.database().find(name);
            return f && t.task().regs.field_written(*f);
          },
          py::arg("field"), "True when the task's streams write the field.")
      .def("fields", &task_fields, "Every field the task's streams write, as a dict name -> value.")
      .def_property_readonly(
          "summary",
          [](const PyTask& t) { return text(ane::sim::describe_task(t.owner->program, t.task())); },
          "What the task computes, in one line (hwx-dump --summary).")
      .def("__repr__", [](const PyTask& t) { return "<libane.Task " + std::to_string(t.task().index) + ">"; });

  py::class_<PyProgram, std::shared_ptr<PyProgram>>(
      m, "Program", "An ANE program (HWX or anec): buffers, tasks, dumps, bytes. Made by open, parse or compile.")
      .def_property_readonly("path", [](const PyProgram& p) { return text(p.program.path); }, "The path it was read from.")
      .def_property_readonly(
          "format", [](const PyProgram& p) { return std::string(ane::format_name(p.program.format)); },
          "'hwx' or 'anec'.")
      .def_property_readonly("name", [](const PyProgram& p) { return text(p.program.name); }, "The network's name.")
      .def_property_readonly(
          "target", [](const PyProgram& p) { return std::string(ane::generation_info(p.program.generation).target); },
          "The hardware generation it was compiled for: 'h13' (M1) ... 'h18' (A19), as Apple's -t flag spells it.")
      .def_property_readonly("size", [](const PyProgram& p) { return p.program.size; }, "Bytes in the file.")
      .def_property_readonly(
          "buffers", [](const PyProgram& p) { return p.program.buffers; }, "The named I/O buffers (list of Buffer).")
      .def_property_readonly(
          "tasks",
          [](const ProgramRef& p) {
            std::vector<PyTask> ts;
            for (size_t i = 0; i < p->program.tasks.size(); ++i) ts.push_back({p, i});
            return ts;
          },
          "The task chain (list of Task).")
      .def(
          "to_dict", [](const PyProgram& p) { return json_loads(ane::dump_json(p.program)); },
          "The document hwx-dump --json prints, as Python objects.")
      .def(
          "dump",
          [](const PyProgram& p, bool summary, bool raw) {
            ane::DumpOptions o;
            o.summary = summary;
            o.raw = raw;
            return text(ane::dump_text(p.program, o));
          },
          py::arg("summary") = false, py::arg("raw") = false,
          "The text hwx-dump prints (summary: only buffers and one line per task; raw: every task word too).")
      .def(
          "to_bytes",
          [](const PyProgram& p) { return py::bytes(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size()); },
          "The program's bytes: a file's own bytes, or what the compiler wrote.")
      .def(
          "save", [](const PyProgram& p, const std::string& path) { check(ane::write_file(path, p.bytes), path); },
          py::arg("path"), "Writes to_bytes() to a file.")
      .def("__repr__", [](const PyProgram& p) {
        return text("<libane.Program '" + p.program.path + "' " + ane::format_name(p.program.format) + ", " +
                    std::to_string(p.program.tasks.size()) + " tasks>");
      });

  m.def("open", &open_file, py::arg("path"), py::arg("format") = py::none(), py::arg("descriptor") = py::none(),
        py::arg("entry") = py::none(),
        "open(path, format=None, descriptor=None, entry=None) -> Program\n\n"
        "Reads an .hwx or an anec image (told apart by content; format='hwx' or 'anec' forces one).\n"
        "anec only: descriptor names the buffers and gives their shapes (a manifest JSON, one JSON\n"
        "entry, or the anec_<name>.h eiln's anect writes); entry picks a manifest entry.\n"
        "Raises libane.Error('file: offset 0x..: problem') on a malformed file.");
  m.def("parse", &parse_bytes, py::arg("data"), py::arg("path") = "<bytes>", py::arg("format") = py::none(),
        "parse(data, path='<bytes>', format=None) -> Program\n\n"
        "As open, from bytes in memory; path only labels messages.");
  m.def(
      "diff",
      [](const PyProgram& a, const PyProgram& b) {
        py::list out;
        for (const auto& e : ane::diff_programs(a.program, b.program))
          out.append(py::dict(py::arg("path") = text(e.path), py::arg("a") = text(e.a), py::arg("b") = text(e.b)));
        return out;
      },
      py::arg("a"), py::arg("b"),
      "diff(a, b) -> list of {'path', 'a', 'b'}\n\n"
      "The differences hwx-dump --diff reports: container fields, buffers, and every register field\n"
      "by task ('task[0].Common.InDim.Win'), with each side's value ('' when absent).");
  m.def("compile", &compile, py::arg("model"), py::arg("weights_dir") = py::none(), py::arg("ident") = py::none(),
        py::arg("compiler") = py::none(),
        "compile(model, weights_dir=None, ident=None, compiler=None) -> Program\n\n"
        "Compiles a network as hwx-build does. model is an ANECompiler network plist, Core ML MIL\n"
        "text (model.mil) or a compiled bundle (Model.mlmodelc), told apart by content. weights_dir\n"
        "is hwx-build's --weights: for a plist the directory its weight paths resolve against\n"
        "(default: the plist's); for MIL what '@model_path' means (a directory), or one weight file\n"
        "every BLOBFILE reads (default: the MIL file's directory). ident is the LC_IDENT text,\n"
        "written exactly (default: hwx-build's, naming the input and '<stem>.hwx'); with the same\n"
        "text the bytes equal hwx-build's. compiler is hwx-build's --compiler ('v4.2.1' or 'macos26';\n"
        "default: macos26 for Core ML input, v4.2.1 for plists).\n"
        "Raises libane.Error('net.plist:27: unit ...: key ...: ...'\n"
        "or 'model.mil:7: op ...: argument ...: ...').");
  m.def("run", &run, py::arg("program"), py::arg("inputs"), py::arg("trace") = false, py::arg("options") = py::none(),
        py::arg("assume") = std::vector<std::string>{},
        "run(program, inputs, trace=False, options=None, assume=()) -> dict | (dict, list)\n\n"
        "Executes a Program on the register-level simulator, as hwx-run does.\n\n"
        "inputs: dict buffer name -> numpy array, float16 or float32 (rounded to nearest-even\n"
        "  fp16), any shape with the buffer's element count; every input buffer is required.\n"
        "options: numerics settings, {'acc': 'fp64'} or ['acc=fp64'] (acc=fp32|fp64|fp32-ordered,\n"
        "  products=exact|fp16, bias=in-acc|after-round, overflow=inf|saturate, subnormal=keep|ftz,\n"
        "  lut=linear|ideal); assume: assumptions to turn on, e.g. ['A3'].\n"
        "Returns a dict output name -> float16 array [N,C,H,W]. With trace=True returns\n"
        "(outputs, records): one dict per task with the fields of hwx-run --json's 'tasks'\n"
        "entries and 'line', the text hwx-run --trace prints. Runs without holding the GIL.\n"
        "Large buffers a run gives back stay mapped (up to 64 MiB) for the next run, which\n"
        "then starts without faulting them in; release_cached_memory() returns them.");
  m.def("release_cached_memory", &ane::release_cached_memory,
        "release_cached_memory() -> None\n\n"
        "Returns to the system the large buffers that earlier runs left mapped for reuse\n"
        "(at most 64 MiB). For a long-lived process that is done simulating.");
}
