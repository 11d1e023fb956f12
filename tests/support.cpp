#include "support.h"

#include <fmt/format.h>

#include "ane/fp16.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ane::test {

std::string shared_dir() {
  if (const char* env = std::getenv("LIBANE_SHARED_DIR")) return env;
  return LIBANE_SHARED_DIR;
}

std::string corpus_dir() { return shared_dir() + "/corpus"; }

bool corpus_available() { return fs::is_directory(corpus_dir() + "/hwx"); }

std::vector<std::string> corpus_hwx_names() {
  std::vector<std::string> names;
  if (!corpus_available()) return names;
  for (const auto& e : fs::directory_iterator(corpus_dir() + "/hwx"))
    if (e.path().extension() == ".hwx") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string corpus_hwx_path(const std::string& name) {
  return corpus_dir() + "/hwx/" + name + ".hwx";
}

Bytes read_or_die(const std::string& path) {
  auto r = ane::read_file(path);
  if (!r) {
    ADD_FAILURE() << r.error().str();
    return {};
  }
  return std::move(r).value();
}

int run_command(const std::string& cmd, std::string* out, std::string* err) {
  std::string errfile = (fs::temp_directory_path() / fs::path("libane_test_err_XXXXXX")).string();
  std::vector<char> tmpl(errfile.begin(), errfile.end());
  tmpl.push_back('\0');
  int fd = mkstemp(tmpl.data());
  if (fd >= 0) close(fd);
  std::string full = cmd + " 2>" + std::string(tmpl.data());
  FILE* p = popen(full.c_str(), "r");
  if (!p) return -1;
  std::string text;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
  int status = pclose(p);
  if (out) *out = std::move(text);
  if (err) {
    std::ifstream f(tmpl.data());
    err->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  fs::remove(tmpl.data());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TempDir::TempDir() {
  static int counter = 0;
  const fs::path p = fs::temp_directory_path() /
                     ("libane_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter));
  fs::create_directories(p);
  path = p.string();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, Bytes(text.begin(), text.end()));
}

void write_bytes(const std::string& path, const Bytes& bytes) {
  auto s = ane::write_file(path, bytes);
  if (!s) ADD_FAILURE() << path << ": " << s.error().str();
}

std::vector<uint16_t> uniform_fp16(size_t count, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<uint16_t> v(count);
  for (auto& x : v) x = double_to_fp16(u(rng));
  return v;
}

Bytes fp16_le_bytes(std::span<const uint16_t> values) {
  Bytes b;
  b.reserve(2 * values.size());
  for (uint16_t h : values) {
    b.push_back(static_cast<uint8_t>(h));
    b.push_back(static_cast<uint8_t>(h >> 8));
  }
  return b;
}

Expected<sim::Tensor> run_one_input(const Program& program, const sim::Tensor& x) {
  auto sim = sim::Simulator::create(program);
  if (!sim) return sim.error();
  if (sim->inputs().size() != 1 || sim->outputs().size() != 1)
    return make_error(fmt::format("{} inputs and {} outputs, not one each", sim->inputs().size(),
                                  sim->outputs().size()));
  if (Status s = sim->set_input(sim->inputs()[0].name, x); !s) return s.error();
  if (Status s = sim->run(); !s) return s.error();
  return sim->read_buffer(sim->outputs()[0].name);
}

}  // namespace ane::test
