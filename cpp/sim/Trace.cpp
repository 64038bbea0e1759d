// SimResult::writeTrace: the Chrome trace-event format (JSON object form), which Perfetto and
// chrome://tracing open, of buildTimeline (Timeline.h says what it holds). One process per
// NeuronCore; one thread per engine and DMA queue that has slices, and per sub-track; complete
// events ("ph": "X") per instruction and DMA trigger; flow events ("s"/"f") per memory
// dependency that delayed an instruction; counter events ("C").
//
// Time: "ts" and "dur" are microseconds, as the format defines them, printed exactly as integer
// nanoseconds / 1000 ("1234.567"): Perfetto reads them back as those integer nanoseconds, so
// slices that touch or nest in the timeline do in the viewer.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

#include "Simulator.h"
#include "Timeline.h"
#include "TraceProgress.h"

namespace sim {

namespace {

class JsonOut {
 public:
  explicit JsonOut(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) throw SimulationError("cannot open trace file '" + path + "' for writing (" + std::strerror(errno) + ")");
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
  // Integer nanoseconds as exact decimal microseconds.
  void us(int64_t ns) {
    char b[32];
    const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    std::snprintf(b, sizeof b, "%s%llu.%03llu", ns < 0 ? "-" : "", static_cast<unsigned long long>(mag / 1000),
                  static_cast<unsigned long long>(mag % 1000));
    buf_ += b;
  }
  // A counter value, in the shortest form that reads back as the same double.
  void value(double v) {
    char b[32];
    const auto res = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, res.ptr);
  }
  void close(const std::string& path) {
    flush();
    if (std::fflush(f_) != 0 && !error_) error_ = errno;
    if (std::fclose(f_) != 0 && !error_) error_ = errno;
    f_ = nullptr;
    if (error_)  // the first failure's reason ("No space left on device")
      throw SimulationError("writing trace file '" + path + "' failed (" + std::strerror(error_) + ")");
  }

 private:
  void flushIfFull() {
    if (buf_.size() > (1 << 16) - 512) flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size() && !error_)
      error_ = errno ? errno : EIO;
    buf_.clear();
  }
  std::FILE* f_;
  int error_ = 0;
  std::string buf_;
};

}  // namespace

void SimResult::writeTrace(const std::string& path) const { sim::writeTrace(*this, path, nullptr); }

void writeTrace(const SimResult& r, const std::string& path, TraceProgress* progress) {
  const auto& arch = r.arch;
  const auto& mode = r.mode;
  const auto& total_ns = r.total_ns;
  const auto& cores = r.cores;
  const auto& records = r.records;
  const Timeline t = buildTimeline(r);
  if (progress) progress->total.store(t.slices.size(), std::memory_order_relaxed);
  JsonOut o(path);
  o.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"neuronxsim\",\"arch\":");
  o.str(arch);
  o.raw(",\"mode\":");
  o.str(mode == Mode::Full ? "full" : "timing");
  o.raw(",\"total_ns\":");
  o.num(total_ns);
  o.raw(",\"clock\":\"integer nanoseconds of simulated time; ts and dur in microseconds\"");
  o.raw("},\"traceEvents\":[\n");
  bool first = true;
  auto sep = [&] {
    if (!first) o.raw(",\n");
    first = false;
  };
  auto meta = [&](const char* what, int pid, int tid, const char* key, auto value) {
    sep();
    o.raw("{\"ph\":\"M\",\"name\":\"");
    o.raw(what);
    o.raw("\",\"pid\":");
    o.num(int64_t{pid});
    if (tid >= 0) {
      o.raw(",\"tid\":");
      o.num(int64_t{tid});
    }
    o.raw(",\"args\":{\"");
    o.raw(key);
    o.raw("\":");
    if constexpr (std::is_same_v<decltype(value), std::string>)
      o.str(value);
    else
      o.num(int64_t{value});
    o.raw("}}");
  };
  for (const CoreResult& c : cores) {
    meta("process_name", c.core, -1, "name", "NeuronCore " + std::to_string(c.core) + " (" + arch + ")");
    meta("process_sort_index", c.core, -1, "sort_index", c.core);
  }
  for (const TimelineTrack& k : t.tracks)
    for (int lane = 0; lane < k.lanes; ++lane) {
      meta("thread_name", k.core, laneTid(k.track, lane), "name", laneName(k.track, lane));
      meta("thread_sort_index", k.core, laneTid(k.track, lane), "sort_index", k.track * 256 + lane);
    }
  // ,"pid":..,"tid":..,"ts":.. of a slice's track and start.
  auto at = [&](const Slice& s) {
    o.raw(",\"pid\":");
    o.num(int64_t{s.core});
    o.raw(",\"tid\":");
    o.num(int64_t{laneTid(s.track, s.lane)});
    o.raw(",\"ts\":");
    o.us(s.start);
  };

  for (size_t i = 0; i < t.slices.size(); ++i) {
    if (progress && i % 1024 == 0) progress->done.store(i, std::memory_order_relaxed);
    const Slice& s = t.slices[i];
    const DecodedInst& d = r.decoded(records[s.record]);
    const bir::Instruction& I = *d.inst;
    // Named by what a profile reader looks for: the opcode, the kernel it was expanded from and its
    // source line (the instruction's own name when it has neither; it is always in args).
    std::string name = s.trigger ? "trigger " + I.opcodeName()
                       : s.descriptors ? "descriptors " + I.opcodeName()
                                       : I.opcodeName();
    if (!I.kernel.empty()) name += " " + I.kernel;
    if (!I.source.empty()) name += " " + I.source;
    if (I.kernel.empty() && I.source.empty()) name += " " + I.name;
    sep();
    o.raw("{\"ph\":\"X\",\"name\":");
    o.str(name);
    o.raw(",\"cat\":");
    o.str(I.opcodeName());
    at(s);
    o.raw(",\"dur\":");
    o.us(s.end - s.start);
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
    o.raw(",\"busy_ns\":");
    o.num(s.busyEnd - s.start);
    // A wait no flow shows: for the v2 SRAM port its engine shares with another (Timing.h).
    if (const uint8_t port = records[s.record].portWait; port && !s.trigger && !s.descriptors) {
      o.raw(",\"waited_for\":");
      o.str(port == kPortSbufDvePool             ? "the SBUF port DVE and Pool share"
            : r.program->config->dve_act_share_psum ? "the PSUM port DVE and ACT share"
                                                    : "a PSUM bank DVE and ACT share");
    }
    o.raw("}}");
  }

  // Flow v1 events, bound to the slices that enclose them: the start at the start of the slice
  // waited for (Perfetto draws the arrow from its end), the end ("bp": "e") at the start of the
  // slice that waited. One id per flow.
  for (size_t f = 0; f < t.flows.size(); ++f) {
    const Flow& flow = t.flows[f];
    for (const uint32_t end : {flow.from, flow.to}) {
      const Slice& s = t.slices[end];
      sep();
      o.raw(end == flow.from ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"");
      o.raw(",\"id\":");
      o.num(static_cast<int64_t>(f));
      o.raw(",\"cat\":\"dependency\",\"name\":\"");
      o.raw(dependencyName(flow.kind));
      o.raw("\"");
      at(s);
      o.raw("}");
    }
  }

  for (const Counter& c : t.counters)
    for (const CounterSample& x : c.samples) {
      sep();
      o.raw("{\"ph\":\"C\",\"name\":");
      o.str(c.name);
      o.raw(",\"pid\":");
      o.num(int64_t{c.core});
      o.raw(",\"ts\":");
      o.us(x.t);
      o.raw(",\"args\":{");
      o.str(c.unit);
      o.raw(":");
      o.value(x.value);
      o.raw("}}");
    }
  o.raw("\n]}\n");
  o.close(path);
}

}  // namespace sim
