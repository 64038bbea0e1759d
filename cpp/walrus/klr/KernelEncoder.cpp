// bir::Module -> KLR file. See KernelFile.h and docs/klr-format.md.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Verifier.h"
#include "walrus/klr/AttrCodec.h"
#include "walrus/klr/KernelFile.h"
#include "walrus/klr/OperatorCodec.h"
#include "walrus/klr/SourcePos.h"

namespace klr {
namespace {

using namespace bir;

bool isKernelNode(const Instruction& I) {
  return isa<InstBIRKernel>(&I) || isa<InstNKIKernel>(&I) || isa<InstNKIKLIRKernel>(&I);
}

class KernelEncoder {
 public:
  KernelEncoder(const Module& m, const KernelFileOptions& o) : m_(m), o_(o) {}

  std::string run() {
    verifyModule(m_);
    if (m_.functions().empty()) throw KLRError("the module has no function: nothing to write");
    std::vector<Item> bodies;
    for (size_t fi = 0; fi < m_.functions().size(); ++fi) bodies.push_back(body(fi));
    Item inputs = interfaceTensors(MemoryType::Input), outputs = interfaceTensors(MemoryType::Output);
    Item payload;
    ContentsKind kind;
    if (bodies.size() == 1) {
      kind = ContentsKind::Kernel;
      payload = record(tags::Kernel, 0, {cbor::text(o_.kernel_name), std::move(inputs),
                                         std::move(outputs), std::move(bodies[0])});
    } else {
      kind = ContentsKind::Lnc;
      payload = record(tags::LncKernel, 0,
                       {cbor::text(o_.kernel_name), std::move(inputs), std::move(outputs),
                        list(std::move(bodies)), list({}), list({}), list({})});
    }
    std::string out;
    cbor::encodeTo(KLRFile_ser(), out);
    cbor::encodeTo(KLRMetaData_ser(neuronxsimFormat()), out);
    cbor::encodeTo(Contents_ser(kind, std::move(payload)), out);
    cbor::encodeTo(moduleRecord(), out);
    return out;
  }

  const EncodingStats& stats() const { return stats_; }

 private:
  // Kernel.inputs / outputs: the Input (Output) DRAM tensors of every function, by name, in order.
  Item interfaceTensors(MemoryType type) {
    std::vector<Item> out;
    std::unordered_set<std::string> seen;
    for (const auto& f : m_.functions())
      for (const auto& set : f->allocations())
        for (const auto& loc : set->locations)
          if (loc->type == type && seen.insert(loc->name).second) out.push_back(tensorNameItem(*loc));
    return list(std::move(out));
  }

  // The BIR the KLR data model has no place for, as BIR JSON without the instructions.
  Item moduleRecord() {
    auto j = nlohmann::ordered_json::parse(moduleToJson(m_, -1));
    for (auto& f : j["functions"]) f.erase("blocks");
    return record(tags::NxsModule, 0, {nat(kNeuronxsimRevision), cbor::text(j.dump())});
  }

  Item body(size_t fi) {
    const Function& f = *m_.functions()[fi];
    TensorTable tensors = TensorTable::declared(f);
    std::vector<Item> blocks;
    for (size_t bi = 0; bi < f.blocks().size(); ++bi) {
      const BasicBlock& bb = *f.blocks()[bi];
      std::vector<Item> stmts;
      for (size_t ii = 0; ii < bb.size(); ++ii) {
        const std::string where = "functions[" + std::to_string(fi) + "].blocks[" +
                                  std::to_string(bi) + "].instructions[" + std::to_string(ii) + "]";
        stmts.push_back(statement(*bb.at(ii), f, tensors, where));
      }
      // noReorder: BIR executes every engine's instructions in program order.
      blocks.push_back(record(tags::Block, 0, {cbor::text(bb.name), cbor::boolean(true),
                                               list(std::move(stmts))}));
    }
    return list(std::move(blocks));
  }

  static void checkEncodable(const Instruction& I, const Function& f, const std::string& where) {
    if (isKernelNode(I))
      throw KLRError(where + " ('" + I.name + "'): kernel node " + I.opcodeName() +
                     " cannot be written into a KLR kernel, which holds ISA code; resolve it first");
    for (const char* side : {"ins", "outs"}) {
      const auto& list = side[0] == 'i' ? I.ins : I.outs;
      for (size_t k = 0; k < list.size(); ++k) {
        const AccessPattern& ap = list[k];
        const std::string at = where + "." + side + "[" + std::to_string(k) + "]";
        if (!ap.isImmediate() && f.findLocation(ap.loc->name) != ap.loc)
          throw KLRError(at + ": tensor '" + ap.loc->name + "' does not belong to function '" +
                         f.name + "'");
      }
    }
  }

  Item statement(const Instruction& I, const Function& f, TensorTable& tensors,
                 const std::string& where) {
    checkEncodable(I, f, where);
    std::optional<Item> op = klrForm(I, tensors);
    if (!op) op = genericForm(I, where);
    return record(tags::Stmt, 0, {std::move(*op), some(cbor::text(I.name)), sourcePosItem(I.source)});
  }

  // The KLR operator for the instruction, wrapped in NxsOperator.ext with the fields it does not
  // reproduce. The operator is decoded right back and compared with the instruction, so whatever
  // KLR's fields lose is recorded. Nullopt when KLR has no operator for the instruction or cannot
  // express its operands exactly.
  std::optional<Item> klrForm(const Instruction& I, TensorTable& tensors) {
    std::optional<Item> klrOp;
    std::unique_ptr<Instruction> back;
    try {
      klrOp = encodeOperator(I);
      if (!klrOp) return std::nullopt;
      back = decodeOperator(*klrOp, std::nullopt, tensors, "");
    } catch (const NotRepresentable&) {
      return std::nullopt;
    } catch (const KLRError&) {  // a value KLR's own reader would refuse
      return std::nullopt;
    }
    if (back->nodeClass() != I.nodeClass() || !sameOperands(I, *back)) return std::nullopt;
    std::vector<Item> attrs = differingAttrs(I, *back);
    if (attrs.empty()) {
      ++stats_.klr_operators;
      return klrOp;
    }
    ++stats_.extended_operators;
    return record(tags::NxsOperator, ctors::NxsOperatorExt, {std::move(*klrOp), list(std::move(attrs))});
  }

  // NxsOperator.isa: the opcode, engine, operands and every field.
  Item genericForm(const Instruction& I, const std::string& where) {
    std::vector<Item> ins, outs;
    try {
      for (const auto& ap : I.ins) ins.push_back(isaOperandItem(ap));
      for (const auto& ap : I.outs) outs.push_back(isaOperandItem(ap));
    } catch (const NotRepresentable& e) {  // cannot happen for a module that verifies
      throw KLRError(where + " ('" + I.name + "'): " + e.why);
    }
    ++stats_.generic_instructions;
    return record(tags::NxsOperator, ctors::NxsOperatorIsa,
                  {cbor::text(I.opcodeName()), engineItem(I.engine), list(std::move(ins)),
                   list(std::move(outs)), list(allAttrs(I))});
  }

  const Module& m_;
  const KernelFileOptions& o_;
  EncodingStats stats_;
};

}  // namespace

std::string encodeKernel(const Module& m, const KernelFileOptions& options, EncodingStats* stats) {
  KernelEncoder e(m, options);
  std::string bytes = e.run();
  if (stats) *stats = e.stats();
  return bytes;
}

void writeKernelFile(const Module& m, const std::string& path, const KernelFileOptions& options) {
  const std::string bytes = encodeKernel(m, options);
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw KLRError(path + ": cannot create a temporary file: " + std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp makes it private; a kernel file is an ordinary artifact
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(tmp.c_str());
      throw KLRError(path + ": write failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw KLRError(path + ": cannot write: " + why);
  }
}

}  // namespace klr
