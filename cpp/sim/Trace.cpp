// SimResult::writeTrace: the Chrome trace-event format (JSON object form), which Perfetto and
// chrome://tracing open. One process per NeuronCore, one thread (track) per engine and per DMA
// queue, complete events ("ph": "X") with microsecond timestamps (printed to the picosecond).
#include <cstdio>
#include <memory>

#include "Simulator.h"

namespace sim {

namespace {

class JsonOut {
 public:
  explicit JsonOut(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) throw SimulationError("cannot open trace file '" + path + "' for writing");
    buf_.reserve(1 << 16);
  }
  ~JsonOut() {
    if (f_) std::fclose(f_);
  }
  void raw(const char* s) { buf_ += s; flushIfFull(); }
  void raw(const std::string& s) { buf_ += s; flushIfFull(); }
  void str(const std::string& s) {
    buf_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': buf_ += "\\\""; break;
        case '\\': buf_ += "\\\\"; break;
        case '\n': buf_ += "\\n"; break;
        case '\r': buf_ += "\\r"; break;
        case '\t': buf_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char e[8];
            std::snprintf(e, sizeof e, "\\u%04x", c);
            buf_ += e;
          } else {
            buf_ += static_cast<char>(c);
          }
      }
    }
    buf_ += '"';
    flushIfFull();
  }
  void num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6f", v);
    buf_ += b;
  }
  void num(int64_t v) { buf_ += std::to_string(v); }
  void close(const std::string& path) {
    flush();
    const bool bad = std::ferror(f_) != 0;
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (bad || rc != 0) throw SimulationError("writing trace file '" + path + "' failed");
  }

 private:
  void flushIfFull() {
    if (buf_.size() > (1 << 16) - 512) flush();
  }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
  }
  std::FILE* f_;
  std::string buf_;
};

}  // namespace

void SimResult::writeTrace(const std::string& path) const {
  JsonOut o(path);
  o.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"neuronxsim\",\"arch\":");
  o.str(arch);
  o.raw(",\"mode\":");
  o.str(mode == Mode::Full ? "full" : "timing");
  o.raw(",\"total_ns\":");
  o.num(total_ns);
  o.raw("},\"traceEvents\":[\n");
  bool first = true;
  auto sep = [&] {
    if (!first) o.raw(",\n");
    first = false;
  };
  for (const CoreResult& c : cores) {
    sep();
    o.raw("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    o.num(int64_t{c.core});
    o.raw(",\"args\":{\"name\":");
    o.str("NeuronCore " + std::to_string(c.core) + " (" + arch + ")");
    o.raw("}}");
    for (int t = 0; t < kMaxTracks; ++t) {
      sep();
      o.raw("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
      o.num(int64_t{c.core});
      o.raw(",\"tid\":");
      o.num(int64_t{t});
      o.raw(",\"args\":{\"name\":");
      o.str(trackName(t));
      o.raw("}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":");
      o.num(int64_t{c.core});
      o.raw(",\"tid\":");
      o.num(int64_t{t});
      o.raw(",\"args\":{\"sort_index\":");
      o.num(int64_t{t});
      o.raw("}}");
    }
  }
  for (const Record& r : records) {
    const DecodedInst& d = decoded(r);
    const bir::Instruction& I = *d.inst;
    auto slice = [&](const std::string& name, int track, double start, double end) {
      sep();
      o.raw("{\"ph\":\"X\",\"name\":");
      o.str(name);
      o.raw(",\"cat\":");
      o.str(I.opcodeName());
      o.raw(",\"pid\":");
      o.num(int64_t{r.core});
      o.raw(",\"tid\":");
      o.num(int64_t{track});
      o.raw(",\"ts\":");
      o.num(start / 1000.0);
      o.raw(",\"dur\":");
      o.num((end - start) / 1000.0);
      o.raw(",\"args\":{\"opcode\":");
      o.str(I.opcodeName());
      o.raw(",\"instruction\":");
      o.str(I.name);
      o.raw(",\"source\":");
      o.str(I.source);
      o.raw(",\"kernel\":");
      o.str(I.kernel);
      o.raw(",\"bytes\":");
      o.num(d.bytes);
      o.raw(",\"flops\":");
      o.num(d.flops);
      o.raw("}}");
    };
    // Named by what a profile reader looks for: the opcode, the kernel it was expanded from and its
    // source line (the instruction's own name when it has neither; it is always in args).
    std::string name = I.opcodeName();
    if (!I.kernel.empty()) name += " " + I.kernel;
    if (!I.source.empty()) name += " " + I.source;
    if (I.kernel.empty() && I.source.empty()) name += " " + I.name;
    slice(name, r.track, r.start_ns, r.end_ns);
    if (r.track >= kFirstQueueTrack) slice("trigger " + name, r.issueTrack, r.issue_ns, r.issue_end_ns);
  }
  o.raw("\n]}\n");
  o.close(path);
}

}  // namespace sim
