// Bindings of libnxsim (`_core.sim`): the machine configuration, the latency model, and the
// simulator (prepare, bind NumPy arrays without copying, run with the GIL released). The readable
// API is neuronxsim.sim.
#include <pybind11/numpy.h>

#include <cstring>

#include "bindings.h"
#include "bir/Hwm.h"
#include "bir/Module.h"
#include "sim/Gemm.h"
#include "sim/ListSchedule.h"
#include "sim/Simulator.h"
#include "sim/Timeline.h"
#include "sim/TraceProgress.h"

namespace nxs::py_bind {
namespace {

using namespace sim;

py::dict configDict(const bir::MachineConfig& c) {
  py::dict d;
  c.fields([&](const char* name, const auto& v) { d[name] = v; });
  return d;
}

py::dict latencyDict(const bir::Latency& l, const bir::Hwm& hwm) {
  py::dict d;
  d["engine"] = l.engine;
  d["cycles"] = l.cycles;
  d["busy_ns"] = l.busy_ns;
  d["access_ns"] = l.access_ns;
  d["clock_ghz"] = hwm.clockGhz(l.engine);
  d["dma_queue"] = l.dma_queue;
  d["dma_latency_ns"] = l.dma_latency_ns;
  d["dma_dge_ns"] = l.dma_dge_ns;
  d["dma_transfer_ns"] = l.dma_transfer_ns;
  d["dma_hbm_ns"] = l.dma_hbm_ns;
  d["dma_descriptors"] = l.dma_descriptors;
  d["dma_engine_mask"] = l.dma_engine_mask;
  d["bytes"] = l.bytes;
  d["flops"] = l.flops;
  d["adjusted_flops"] = l.adjusted_flops;
  d["whole_core"] = l.whole_core;
  return d;
}

// UTF-8 -> UCS4 code points (invalid sequences become U+FFFD), for NumPy 'U' columns.
size_t decodeUtf8(const std::string& s, uint32_t* out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < s.size() && n < cap;) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0xFFFD;
    int len = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c >> 5) == 0x6 || (c >> 4) == 0xE || (c >> 3) == 0x1E) {
      len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
      if (i + static_cast<size_t>(len) <= s.size()) {
        cp = c & (0x7F >> len);
        for (int k = 1; k < len; ++k) {
          const auto cc = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
          if ((cc >> 6) != 0x2) {
            cp = 0xFFFD;
            len = k;
            break;
          }
          cp = (cp << 6) | (cc & 0x3F);
        }
      } else {
        len = static_cast<int>(s.size() - i);
      }
    }
    out[n++] = cp;
    i += static_cast<size_t>(len);
  }
  return n;
}

size_t utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A 'U<width>' column of n strings, filled from get(i).
template <class Get>
py::array unicodeColumn(size_t n, Get&& get) {
  size_t width = 1;
  for (size_t i = 0; i < n; ++i) width = std::max(width, utf8Length(get(i)));
  py::array col(py::dtype("<U" + std::to_string(width)), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)});
  auto* base = static_cast<uint32_t*>(col.mutable_data());
  std::memset(base, 0, n * width * 4);
  for (size_t i = 0; i < n; ++i) decodeUtf8(get(i), base + i * width, width);
  return col;
}

template <class T, class Get>
py::array_t<T> numericColumn(size_t n, Get&& get) {
  py::array_t<T> col(static_cast<py::ssize_t>(n));
  T* p = col.mutable_data();
  for (size_t i = 0; i < n; ++i) p[i] = get(i);
  return col;
}

// The per-instruction records as columns (Python assembles the structured array).
py::dict recordColumns(const SimResult& r) {
  const auto& rec = r.records;
  const size_t n = rec.size();
  std::vector<const DecodedInst*> dec(n);
  for (size_t i = 0; i < n; ++i) dec[i] = &r.decoded(rec[i]);
  py::dict cols;
  cols["core"] = numericColumn<int16_t>(n, [&](size_t i) { return static_cast<int16_t>(rec[i].core); });
  cols["start_ns"] = numericColumn<double>(n, [&](size_t i) { return rec[i].start_ns; });
  cols["end_ns"] = numericColumn<double>(n, [&](size_t i) { return rec[i].end_ns; });
  cols["engine"] = unicodeColumn(n, [&](size_t i) -> std::string {
    return rec[i].track >= kFirstQueueTrack ? "DMA" : trackName(rec[i].track);
  });
  cols["queue"] = numericColumn<int16_t>(n, [&](size_t i) {
    return static_cast<int16_t>(rec[i].track >= kFirstQueueTrack ? rec[i].track - kFirstQueueTrack : -1);
  });
  cols["issue_engine"] = unicodeColumn(n, [&](size_t i) -> std::string { return trackName(rec[i].issueTrack); });
  cols["issue_ns"] = numericColumn<double>(n, [&](size_t i) { return rec[i].issue_ns; });
  cols["opcode"] = unicodeColumn(n, [&](size_t i) -> const std::string& { return dec[i]->inst->opcodeName(); });
  cols["name"] = unicodeColumn(n, [&](size_t i) -> const std::string& { return dec[i]->inst->name; });
  cols["cycles"] = numericColumn<double>(n, [&](size_t i) { return dec[i]->cycles; });
  cols["busy_ns"] = numericColumn<double>(n, [&](size_t i) { return rec[i].busy_ns(); });
  cols["bytes"] = numericColumn<int64_t>(n, [&](size_t i) { return dec[i]->bytes; });
  cols["flops"] = numericColumn<int64_t>(n, [&](size_t i) { return dec[i]->flops; });
  cols["adjusted_flops"] = numericColumn<double>(n, [&](size_t i) { return dec[i]->adjusted_flops; });
  cols["source"] = unicodeColumn(n, [&](size_t i) -> const std::string& { return dec[i]->inst->source; });
  cols["kernel"] = unicodeColumn(n, [&](size_t i) -> const std::string& { return dec[i]->inst->kernel; });
  return cols;
}

// The trace's slices as columns (sim::buildTimeline; Python draws the timeline picture from them).
py::dict sliceColumns(const SimResult& r) {
  Timeline t;
  {
    py::gil_scoped_release release;
    t = buildTimeline(r);
  }
  const auto& s = t.slices;
  const size_t n = s.size();
  py::dict cols;
  cols["core"] = numericColumn<int16_t>(n, [&](size_t i) { return static_cast<int16_t>(s[i].core); });
  cols["track"] = numericColumn<int16_t>(n, [&](size_t i) { return static_cast<int16_t>(s[i].track); });
  cols["lane"] = numericColumn<int16_t>(n, [&](size_t i) { return static_cast<int16_t>(s[i].lane); });
  cols["start_ns"] = numericColumn<int64_t>(n, [&](size_t i) { return s[i].start; });
  cols["end_ns"] = numericColumn<int64_t>(n, [&](size_t i) { return s[i].end; });
  cols["busy_end_ns"] = numericColumn<int64_t>(n, [&](size_t i) { return s[i].busyEnd; });
  cols["record"] = numericColumn<int64_t>(n, [&](size_t i) { return static_cast<int64_t>(s[i].record); });
  cols["trigger"] = numericColumn<bool>(n, [&](size_t i) { return s[i].trigger; });
  cols["descriptors"] = numericColumn<bool>(n, [&](size_t i) { return s[i].descriptors; });
  cols["whole_core"] = numericColumn<bool>(n, [&](size_t i) { return s[i].wholeCore; });
  return cols;
}

py::list coreList(const SimResult& r) {
  py::list out;
  for (const CoreResult& c : r.cores) {
    py::dict tracks;
    for (int t = 0; t < kMaxTracks; ++t)
      tracks[trackName(t)] = py::make_tuple(c.tracks[t].busy_ns, c.tracks[t].instructions);
    py::dict d;
    d["core"] = c.core;
    d["end_ns"] = c.end_ns;
    d["pe_flops"] = c.pe_flops;
    d["pe_adjusted_flops"] = c.pe_adjusted_flops;
    d["tracks"] = tracks;
    out.append(d);
  }
  return out;
}

Mode parseMode(const std::string& mode) {
  if (mode == "full") return Mode::Full;
  if (mode == "timing") return Mode::Timing;
  throw SimulationError("mode '" + mode + "': choose 'full' (numerics and time) or 'timing' (time only)");
}

void bindSim(py::module_& m) {
  m.def("latency",
        [](const bir::Instruction& I, const std::string& arch) {
          auto hwm = bir::makeHwm(arch);
          return latencyDict(hwm->getLatency(I), *hwm);
        },
        py::arg("instruction"), py::arg("arch") = "trn1",
        "bir::Hwm::getLatency for one instruction: its engine, cycles and nanoseconds.");
  m.def("engine_of", [](const bir::Instruction& I) { return bir::Hwm::engineOf(I); });
  const auto statsDict = [](const ScheduleStats& s) {
    py::dict d;
    d["blocks"] = s.blocks;
    d["kept"] = s.kept;
    d["moved"] = s.moved;
    d["refused"] = s.refused;
    return d;
  };
  m.def("schedule_function",
        [statsDict](bir::Module& module, size_t function, const std::string& arch) {
          return statsDict(scheduleFunction(module, function, arch));
        },
        py::arg("module"), py::arg("function"), py::arg("arch"),
        "Reorders functions[function]'s blocks by list scheduling over their dependency graph "
        "(sim/ListSchedule.h); returns {blocks reordered, blocks kept, instructions moved}.");
  m.def("schedule_module",
        [statsDict](bir::Module& module, const std::string& arch) {
          py::list l;
          for (const ScheduleStats& s : scheduleModule(module, arch)) l.append(statsDict(s));
          return l;
        },
        py::arg("module"), py::arg("arch"),
        "schedule_function for every function of the module, in order, from one decoding of "
        "the module when the simulator accepts it whole; returns the list of their dicts.");
  m.def(
      "engine_orders",
      [](uint32_t opcode, bool accumulates, bool randomMemset) {
        if (opcode >= bir::InstructionType::kCount) throw py::value_error("engine_orders: no such opcode");
        return engineOrders(bir::kNodeClassOfOpcode[opcode], accumulates, randomMemset);
      },
      py::arg("opcode"), py::arg("accumulates"), py::arg("random_memset"),
      "The engine-state orders an instruction of this opcode number keeps beside its memory "
      "accesses, as bits (sim/ListSchedule.h EngineOrder: 1 ScalarE accumulators, 2 DevicePrint, "
      "4 VectorE accumulation registers, 8 random generators, 16 nothing around it may move); "
      "accumulates: an Activation whose acc is not Idle; random_memset: a Memset in Random mode.");
  m.attr("ORDER_WHOLE_BLOCK") = static_cast<uint32_t>(kOrderWholeBlock);
  py::class_<PreparedProgram>(m, "PreparedProgram",
                              "The scheduling pass's timing-mode decoding of a module (sim/Simulator.h): "
                              "for the library's own trace-then-simulate paths only.")
      .def_property_readonly("arch", [](const PreparedProgram& p) { return p.arch; })
      .def_property_readonly("instruction_count",
                             [](const PreparedProgram& p) { return p.program->instructionCount(); });
  m.def("schedule_module_prepared",
        [statsDict](bir::Module& module, const std::string& arch) {
          py::list l;
          std::shared_ptr<Program> program;
          for (const ScheduleStats& s : scheduleModule(module, arch, &program)) l.append(statsDict(s));
          std::optional<PreparedProgram> prepared;
          if (program) prepared = PreparedProgram{std::move(program), &module, arch};
          return py::make_tuple(l, prepared);
        },
        py::arg("module"), py::arg("arch"),
        "schedule_module, and its decoding of the module reordered in step (a PreparedProgram for "
        "Simulator(prepared=...), valid while nothing changes the module), or None where some "
        "function was refused: (stats, prepared).");
  m.attr("TRACK_NAMES") = [] {
    py::list l;
    for (int t = 0; t < kMaxTracks; ++t) l.append(trackName(t));
    return l;
  }();
  m.attr("NUM_ENGINES") = kNumEngines;
  m.def("lane_name", &laneName, py::arg("track"), py::arg("lane"),
        "The trace's name of a track's lane: \"ACT\", \"ACT (pipelined)\", \"ACT (pipelined 2)\".");

  py::class_<sim::TraceProgress>(m, "TraceProgress", "How far write_trace is: done of total slices (read it from another thread).")
      .def(py::init<>())
      .def_property_readonly("done", [](const sim::TraceProgress& p) { return p.done.load(std::memory_order_relaxed); })
      .def_property_readonly("total", [](const sim::TraceProgress& p) { return p.total.load(std::memory_order_relaxed); });

  py::class_<SimResult>(m, "SimResult")
      .def_readonly("arch", &SimResult::arch)
      .def_property_readonly("mode", [](const SimResult& r) { return r.mode == Mode::Full ? "full" : "timing"; })
      .def_readonly("total_ns", &SimResult::total_ns)
      .def_readonly("pe_flops", &SimResult::pe_flops)
      .def_readonly("pe_adjusted_flops", &SimResult::pe_adjusted_flops)
      .def_readonly("pe_mfu", &SimResult::pe_mfu)
      .def_readonly("instruction_count", &SimResult::instructions)
      .def_readonly("prepare_seconds", &SimResult::prepare_seconds)
      .def_readonly("run_seconds", &SimResult::run_seconds)
      .def_readonly("run_cpu_seconds", &SimResult::run_cpu_seconds)
      .def_property_readonly("cores", &coreList)
      .def("record_columns", &recordColumns)
      .def("slice_columns", &sliceColumns)
      .def_property_readonly("record_count", [](const SimResult& r) { return r.records.size(); })
      .def("write_trace", [](const SimResult& r, const std::string& path, sim::TraceProgress* progress) {
        py::gil_scoped_release release;
        sim::writeTrace(r, path, progress);
      }, py::arg("path"), py::arg("progress") = nullptr,
         "Writes the trace file; `progress` (a TraceProgress) is updated as it goes.")
      .def_property_readonly("unwritten_outputs", [](const SimResult& r) {
        py::list out;
        for (const auto& u : r.unwritten_outputs)
          out.append(py::make_tuple(u.name, u.elements, u.first, py::tuple(py::cast(u.shape)), u.dtype));
        return out;
      }, "(name, elements never written, the first one's flat index, shape, dtype) of each Output tensor "
         "the run left partly unwritten, in the module's tensor order (timing mode: from the writes' "
         "access patterns).")
      .def_property_readonly("prints", [](const SimResult& r) {
        py::list out;
        for (const auto& p : r.prints) {
          py::array_t<float> v({p.partitions, p.elements});
          std::memcpy(v.mutable_data(), p.values.data(), p.values.size() * sizeof(float));
          out.append(py::make_tuple(p.instruction, p.prefix, v));
        }
        return out;
      });

  py::class_<Simulator>(m, "Simulator")
      .def(py::init([](const bir::Module& mod, const std::optional<std::string>& arch, const std::string& mode,
                       std::optional<int64_t> core, int64_t threads, bool records, const PreparedProgram* prepared) {
             GemmEngine::checkThreads(threads);
             SimOptions o;
             o.arch = bir::runArch(arch.value_or(""), mod.arch);
             o.mode = parseMode(mode);
             o.neuron_core_id = core;
             o.threads = static_cast<int>(threads);
             o.records = records;
             return prepared ? std::make_unique<Simulator>(mod, o, *prepared) : std::make_unique<Simulator>(mod, o);
           }),
           py::arg("module"), py::arg("arch") = py::none(), py::arg("mode") = "full",
           py::arg("neuron_core_id") = py::none(), py::arg("threads") = 0, py::arg("records") = true,
           py::arg("prepared") = nullptr, py::keep_alive<1, 2>(),
           "`arch`: None runs the module's own arch; another name must be of the same generation. "
           "`prepared`: start from that PreparedProgram of `module` (timing mode, its arch, every "
           "function) instead of decoding the module.")
      .def_property_readonly("config", [](const Simulator& s) { return configDict(s.config()); })
      .def("tensors", [](const Simulator& s) {
        py::list out;
        for (const auto& t : s.tensors()) {
          py::dict d;
          d["name"] = t.name;
          d["type"] = t.type;
          d["dtype"] = t.dtype;
          d["shape"] = t.shape;
          d["bytes"] = t.bytes;
          d["written_by_module"] = t.written_by_module;
          out.append(d);
        }
        return out;
      })
      .def("bind",
           [](Simulator& s, const std::string& name, py::array a) {
             if (!(a.flags() & py::array::c_style))
               throw SimulationError("tensor '" + name + "': the array must be C-contiguous");
             s.bind(name, const_cast<void*>(a.data()), a.nbytes());
           },
           py::arg("name"), py::arg("array"))
      .def("run",
           [](Simulator& s) {
             py::gil_scoped_release release;
             return s.run();
           },
           py::keep_alive<0, 1>())  // the result resolves records through the module
      .def_property_readonly("instruction_count", [](const Simulator& s) { return s.program().instructionCount(); })
      .def("instructions_done", &Simulator::instructionsDone,
           "Instructions the run in progress has done (for a progress bar; read from another thread).");
}

NXS_REGISTER_SUBMODULE(sim, 20, "libnxsim: the NeuronCore tile-engine simulator and bir::Hwm", bindSim);

}  // namespace
}  // namespace nxs::py_bind
