// Bindings of libwalrus: KLR files (read, write, inspect) and the IT55/IT56 kernel-node resolvers.
// The readable API is neuronxsim.walrus.
#include "bindings.h"
#include "bir/Error.h"
#include "walrus/Clone.h"
#include "walrus/CompiledNkiKernels.h"
#include "walrus/KernelNodeLatency.h"
#include "walrus/KernelNodeResolver.h"
#include "walrus/klr/KernelFile.h"

namespace nxs::py_bind {
namespace {

py::dict infoDict(const klr::KlrInfo& i) {
  auto tensors = [](const std::vector<klr::KlrTensorInfo>& list) {
    py::list out;
    for (const auto& t : list) {
      py::dict d;
      d["name"] = t.name;
      d["dtype"] = t.dtype;
      d["shape"] = t.shape;
      d["memory"] = t.memory;
      out.append(d);
    }
    return out;
  };
  py::dict d;
  d["version"] = py::make_tuple(i.header.major, i.header.minor, i.header.patch);
  d["format"] = i.format;
  d["kind"] = klr::contentsKindName(i.kind);
  d["contents_ctor"] = i.contents_ctor;
  d["numbering"] = i.numbering;
  d["neuronxsim_revision"] = i.neuronxsim_revision;
  d["lowerable"] = i.lowering_refusal.empty();
  d["lowering_refusal"] = i.lowering_refusal;
  if (!i.entry.empty()) d["entry"] = i.entry;
  if (i.kind == klr::ContentsKind::Hlo) d["callsite"] = i.callsite;
  if (i.kind == klr::ContentsKind::Kernel || i.kind == klr::ContentsKind::Lnc) {
    d["kernel_name"] = i.kernel_name;
    d["inputs"] = tensors(i.inputs);
    d["outputs"] = tensors(i.outputs);
    d["bodies"] = i.bodies;
    d["statements"] = i.statements;
  }
  return d;
}

void bindWalrus(py::module_& m) {
  m.def("klr_info", [](const std::string& path) { return infoDict(klr::readKlrInfo(path)); },
        py::arg("path"), "What a KLR file holds (header, metadata, Contents kind...), without lowering it.");
  m.def("read_kernel_file", &klr::readKernelFile, py::arg("path"),
        "The traced kernel (a verified bir.Module) a KLR file holds.");
  m.def("decode_kernel", [](py::bytes data) { return klr::decodeKernel(std::string(data)); },
        py::arg("data"));
  m.def("write_kernel_file",
        [](const bir::Module& mod, const std::string& path, const std::string& kernelName) {
          klr::KernelFileOptions o;
          o.kernel_name = kernelName;
          klr::writeKernelFile(mod, path, o);
        },
        py::arg("module"), py::arg("path"), py::arg("kernel_name") = "kernel");
  m.def("encode_kernel",
        [](const bir::Module& mod, const std::string& kernelName) {
          klr::KernelFileOptions o;
          o.kernel_name = kernelName;
          klr::EncodingStats stats;
          const std::string bytes = klr::encodeKernel(mod, o, &stats);
          py::dict s;
          s["klr_operators"] = stats.klr_operators;
          s["extended_operators"] = stats.extended_operators;
          s["generic_instructions"] = stats.generic_instructions;
          return py::make_tuple(py::bytes(bytes), s);
        },
        py::arg("module"), py::arg("kernel_name") = "kernel",
        "(file bytes, {klr_operators, extended_operators, generic_instructions}).");
  m.def("resolve_kernel_nodes",
        [](bir::Module& mod, bool nki, bool klir, const std::string& baseDir,
           const std::vector<std::string>& allowedDirs, bool verify) {
          walrus::ResolveOptions o;
          o.nki_kernels = nki;
          o.klir_kernels = klir;
          o.base_dir = baseDir;
          o.allowed_dirs = allowedDirs;
          o.verify = verify;
          return walrus::KernelNodeResolver(mod, o).run();
        },
        py::arg("module"), py::arg("nki_kernels") = true, py::arg("klir_kernels") = true,
        py::arg("base_dir") = "", py::arg("allowed_dirs") = std::vector<std::string>{}, py::arg("verify") = true,
        "Resolves IT55/IT56 nodes in place; returns how many. Instruction objects taken from the "
        "module before are invalid afterwards.");
  m.attr("NEURONXSIM_KLR_FORMAT") = klr::neuronxsimFormat();
  m.def("add_compiled_nki_kernel",
        [](const std::string& handle, const py::bytes& data) { walrus::addCompiledNkiKernel(handle, data); },
        py::arg("handle"), py::arg("data"), "Registers a user kernel the NKI front end compiled (an IT55 func).");
  m.def("compiled_nki_kernel",
        [](const std::string& handle) -> std::optional<py::bytes> {
          const auto data = walrus::findCompiledNkiKernel(handle);
          if (!data) return std::nullopt;
          return py::bytes(*data);
        },
        py::arg("handle"), "The artifact registered under `handle`, or None.");
  m.def("kernel_node_latency_stats", [] {
    const auto s = walrus::kernelNodeLatencyStats();
    py::dict d;
    d["computed"] = s.computed;
    d["cached"] = s.cached;
    return d;
  });

  // bir.Module.clone is walrus::cloneModule (walrus/Clone.h), attached to the class bound in
  // bind_bir.cpp from here, where the rest of the copying code is bound.
  py::object moduleClass = py::type::of<bir::Module>();
  moduleClass.attr("clone") = py::cpp_function(
      [](const bir::Module& mod) { return walrus::cloneModule(mod); }, py::name("clone"),
      py::is_method(moduleClass),
      "A deep copy: same functions, allocations, blocks and instructions (names kept), sharing "
      "nothing with this module; its JSON is byte-identical.");
}

NXS_REGISTER_SUBMODULE(walrus, 30, "libwalrus: KLR files and the kernel-node resolvers", bindWalrus);

}  // namespace
}  // namespace nxs::py_bind
