// KLR file -> bir::Module, and what `klr_info` reports. See KernelFile.h and docs/klr-format.md.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

// The payload of Contents.kernel or Contents.lnc, with one body per logical core.
struct CoreKernel {
  std::string name;
  const std::vector<Item>* inputs = nullptr;
  const std::vector<Item>* outputs = nullptr;
  std::vector<const Item*> bodies;  // each a List Block
};

CoreKernel readCoreKernel(const Contents& c) {
  CoreKernel k;
  if (c.kind == ContentsKind::Kernel) {
    Record r(c.payload, tags::Kernel, "Kernel");
    r.expectFields(4);
    k.name = readString(r[0], "Kernel.name");
    k.inputs = &readList(r[1], "Kernel.inputs");
    k.outputs = &readList(r[2], "Kernel.outputs");
    readList(r[3], "Kernel.body");
    k.bodies.push_back(&r[3]);
    return k;
  }
  Record r(c.payload, tags::LncKernel, "LncKernel");
  r.expectFields(7);
  k.name = readString(r[0], "LncKernel.name");
  k.inputs = &readList(r[1], "LncKernel.inputs");
  k.outputs = &readList(r[2], "LncKernel.outputs");
  for (const Item& body : readList(r[3], "LncKernel.bodies")) {
    readList(body, "LncKernel.bodies");
    k.bodies.push_back(&body);
  }
  if (k.bodies.empty()) fail(r[3], "LncKernel.bodies", "the kernel has no body");
  static const char* kUnsupported[] = {"sharedConstants (constant tensors in side files)",
                                       "sharedBuffers", "edges (scheduling edges)"};
  for (size_t i = 4; i < 7; ++i)
    if (!readList(r[i], r.field(i)).empty())
      fail(r[i], r.field(i), std::string("LncKernel ") + kUnsupported[i - 4] + " are not supported");
  return k;
}

std::string refusalFor(const Contents& c) {
  const std::string needTraced =
      "; lowering needs a traced kernel (Contents.kernel or Contents.lnc): trace the kernel first "
      "(neuronxsim.nki, or `klr trace`)";
  switch (c.kind) {
    case ContentsKind::Python:
      return "the file contains a Python-source kernel (Contents.python)" + needTraced;
    case ContentsKind::Nki:
      return "the file contains an NKI-source kernel (Contents.nki)" + needTraced;
    case ContentsKind::Hlo:
      return "the file contains an HLO call-site record (Contents.hlo, " + std::string(c.numbering) +
             " numbering) naming '" + c.payload.bytes + "', not a kernel" + needTraced;
    default:
      return {};
  }
}

class KernelDecoder {
 public:
  explicit KernelDecoder(const KlrContainer& c) : c_(c), k_(readCoreKernel(c.contents)) {}

  std::unique_ptr<Module> run() {
    std::unique_ptr<Module> m = c_.module_record ? declaredModule() : undeclaredModule();
    for (size_t i = 0; i < k_.bodies.size(); ++i) {
      Function& f = *m->functions()[i];
      TensorTable tensors = c_.module_record ? TensorTable::declared(f) : derivedTensors(f);
      const std::string what = k_.bodies.size() == 1 ? "Kernel.body" : "LncKernel.bodies[" + std::to_string(i) + "]";
      readBody(*k_.bodies[i], f, tensors, what);
    }
    try {
      verifyModule(*m);
    } catch (const BIRError& e) {
      cbor::failAt(c_.contents.offset, std::string("the kernel read is not valid BIR: ") + e.what());
    }
    return m;
  }
  const std::string& kernelName() const { return k_.name; }

 private:
  // A neuronxsim file: the module record declares the functions and their tensors.
  std::unique_ptr<Module> declaredModule() {
    Record r(*c_.module_record, tags::NxsModule, "module record");
    r.expectFields(2);
    if (readNat(r[0], "module record.revision") != static_cast<uint64_t>(c_.neuronxsim_revision))
      fail(r[0], "module record", "its revision differs from the metadata format's");
    const std::string json = readString(r[1], "module record.bir");
    std::unique_ptr<Module> m;
    try {
      JsonReadOptions opts;
      opts.verify = false;
      m = moduleFromJson(json, opts);
    } catch (const BIRError& e) {
      fail(r[1], "module record", e.what());
    }
    if (m->functions().size() != k_.bodies.size())
      fail(r[1], "module record", "it declares " + std::to_string(m->functions().size()) +
                                      " function(s) for " + std::to_string(k_.bodies.size()) +
                                      " kernel bodies");
    for (const auto& f : m->functions())
      if (!f->blocks().empty())
        fail(r[1], "module record", "function '" + f->name + "' has blocks; instructions belong in Contents");
    for (const Item& tn : *k_.inputs) checkInterfaceTensor(*m, tn, "Kernel.inputs");
    for (const Item& tn : *k_.outputs) checkInterfaceTensor(*m, tn, "Kernel.outputs");
    return m;
  }

  // A KLR-written kernel: one function per body, whose tensors its TensorNames create.
  std::unique_ptr<Module> undeclaredModule() {
    auto m = std::make_unique<Module>();
    for (size_t i = 0; i < k_.bodies.size(); ++i) m->addFunction();
    return m;
  }

  // Kernel.inputs / outputs of a neuronxsim file must name declared tensors.
  static void checkInterfaceTensor(const Module& m, const Item& tn, const std::string& what) {
    const std::string name = interfaceName(tn, what);
    for (const auto& f : m.functions())
      if (f->findLocation(name)) {
        TensorTable::declared(*f).resolve(tn, what);
        return;
      }
    fail(tn, what, "tensor '" + name + "' is not declared by the module record");
  }

  // The tensors of a KLR-written kernel's function: inputs and outputs first.
  TensorTable derivedTensors(Function& f) {
    std::unordered_set<std::string> in, out;
    for (const Item& tn : *k_.inputs) in.insert(interfaceName(tn, "Kernel.inputs"));
    for (const Item& tn : *k_.outputs) out.insert(interfaceName(tn, "Kernel.outputs"));
    TensorTable t = TensorTable::deriving(f, in, out);
    for (const Item& tn : *k_.inputs) t.resolve(tn, "Kernel.inputs");
    for (const Item& tn : *k_.outputs) t.resolve(tn, "Kernel.outputs");
    return t;
  }

  static std::string interfaceName(const Item& tn, const std::string& what) {
    Record r(tn, tags::TensorName, what);
    r.expectFields(6);
    return readString(r[0], what + ".name");
  }

  void readBody(const Item& body, Function& f, TensorTable& tensors, const std::string& what) {
    const auto& blocks = body.items;
    for (size_t b = 0; b < blocks.size(); ++b) {
      const std::string bw = what + "[" + std::to_string(b) + "]";
      Record blk(blocks[b], tags::Block, bw);
      blk.expectFields(3);
      BasicBlock* bb = f.addBlock(readString(blk[0], bw + ".label"));
      readBool(blk[1], bw + ".noReorder");  // BIR keeps program order either way
      const auto& stmts = readList(blk[2], bw + ".body");
      for (size_t s = 0; s < stmts.size(); ++s)
        readStatement(stmts[s], f, *bb, tensors, bw + ".body[" + std::to_string(s) + "]");
    }
  }

  void readStatement(const Item& it, Function& f, BasicBlock& bb, TensorTable& tensors,
                     const std::string& what) {
    Record s(it, tags::Stmt, what);
    if (s.ctor() != 0) fail(it, what, "Stmt has one constructor (oper)");
    s.expectFields(3);
    std::unique_ptr<Instruction> I = readOperator(s[0], tensors, what + ".op");
    if (const Item* name = readOption(s[1], what + ".name")) {
      I->name = readString(*name, what + ".name");
      if (I->name.empty() || f.hasInstructionName(I->name))
        fail(*name, what + ".name", "instruction name '" + I->name + "' is empty or used twice");
    }
    I->source = readSourcePos(s[2], what + ".pos");
    bb.append(std::move(I));
  }

  std::unique_ptr<Instruction> readOperator(const Item& op, TensorTable& tensors,
                                            const std::string& what) {
    if (isRecordOf(op, tags::Operator)) return decodeOperator(op, std::nullopt, tensors, what);
    if (!isRecordOf(op, tags::NxsOperator))
      fail(op, what, "expected a Core.Operator (tag 218) or a neuronxsim operator (tag 0xf0)");
    Record x(op, tags::NxsOperator, what);
    if (x.ctor() == ctors::NxsOperatorExt) {
      x.expectFields(2);
      auto I = decodeOperator(x[0], readOpcodeAttr(x[1], what + ".attrs"), tensors, what);
      applyAttrs(*I, x[1], what + ".attrs");
      return I;
    }
    if (x.ctor() != ctors::NxsOperatorIsa)
      fail(op, what, "the neuronxsim operator has no constructor " + std::to_string(x.ctor()));
    x.expectFields(5);
    const std::string opname = readString(x[0], what + ".opcode");
    Opcode opcode;
    try {
      opcode = string2InstructionType(opname);
    } catch (const BIRError& e) {
      fail(x[0], what + ".opcode", e.what());
    }
    if (opcode == InstructionType::BIRKernel || opcode == InstructionType::NKIKernel ||
        opcode == InstructionType::NKIKLIRKernel)
      fail(x[0], what + ".opcode", "kernel node " + opname + " inside a KLR kernel");
    auto I = createInstruction(opcode);
    I->engine = readEngine(x[1], what + ".engine");
    const auto& ins = readList(x[2], what + ".ins");
    for (size_t k = 0; k < ins.size(); ++k)
      I->ins.push_back(readIsaOperand(ins[k], tensors, what + ".ins[" + std::to_string(k) + "]"));
    const auto& outs = readList(x[3], what + ".outs");
    for (size_t k = 0; k < outs.size(); ++k)
      I->outs.push_back(readIsaOperand(outs[k], tensors, what + ".outs[" + std::to_string(k) + "]"));
    applyAttrs(*I, x[4], what + ".attrs");
    return I;
  }

  const KlrContainer& c_;
  CoreKernel k_;
};

template <class F>
auto withPath(const std::string& path, F&& f) {
  try {
    return f();
  } catch (const KLRError& e) {
    throw KLRError(path + ": " + e.what());
  }
}

KlrTensorInfo tensorInfo(const Item& tn) {
  Record r(tn, tags::TensorName, "TensorName");
  r.expectFields(6);
  KlrTensorInfo t;
  t.name = readString(r[0], "TensorName.name");
  t.dtype = std::string(kDtype.ctors[readEnum(r[1], kDtype, "TensorName.dtype")]);
  Record shape(r[2], tags::Shape, "TensorName.shape");
  shape.expectFields(2);
  t.shape.push_back(readSize(shape[0], "Shape.parDim"));
  for (const Item& d : readList(shape[1], "Shape.freeDims")) t.shape.push_back(readSize(d, "Shape.freeDims"));
  Record addr(r[3], tags::Address, "TensorName.address");
  addr.expectFields(7);
  t.memory = std::string(kMemory.ctors[readEnum(addr[1], kMemory, "Address.memory")]);
  return t;
}

// The entry function of a source-level kernel: the first field of Python.Kernel and NKI.Kernel.
std::string sourceEntry(const Item& payload) {
  if (!payload.isTag() || payload.tagged().type != cbor::Type::Array) return {};
  const auto& fields = payload.tagged().items;
  return !fields.empty() && fields[0].type == cbor::Type::Text ? fields[0].bytes : std::string();
}

}  // namespace

namespace {
NamedKernel decodeNamedKernel(std::string_view bytes) {
  const KlrContainer c = readContainer(bytes);
  const std::string refusal = refusalFor(c.contents);
  if (!refusal.empty()) cbor::failAt(c.contents.offset, refusal);
  KernelDecoder decoder(c);
  std::unique_ptr<Module> m = decoder.run();
  return {std::move(m), decoder.kernelName()};
}
}  // namespace

std::unique_ptr<Module> decodeKernel(std::string_view bytes) { return decodeNamedKernel(bytes).module; }

std::string readFileBytes(const std::string& path) {
  // Opened without blocking and checked once open: a named pipe, a device or a directory is
  // refused by what it is, never waited on or read as if it were a file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw KLRError(path + ": cannot open the file (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw KLRError(path + ": cannot read the file (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw KLRError(path + ": is a directory, not a file");
  if (S_ISFIFO(st.st_mode)) throw KLRError(path + ": is a named pipe (FIFO), not a regular file");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) throw KLRError(path + ": is a device, not a regular file");
  if (!S_ISREG(st.st_mode)) throw KLRError(path + ": is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) throw KLRError(path + ": the file is larger than 1 GiB");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw KLRError(path + ": cannot read the file (" + std::strerror(errno) + ")");
    if (n == 0) throw KLRError(path + ": the file ended after " + std::to_string(got) + " of " +
                               std::to_string(bytes.size()) + " bytes while being read");
    got += static_cast<size_t>(n);
  }
  return bytes;
}

std::unique_ptr<Module> readKernelFile(const std::string& path) {
  const std::string bytes = readFileBytes(path);
  return withPath(path, [&] { return decodeKernel(bytes); });
}

NamedKernel readNamedKernelFile(const std::string& path) {
  const std::string bytes = readFileBytes(path);
  return withPath(path, [&] { return decodeNamedKernel(bytes); });
}

KlrInfo inspectKlr(std::string_view bytes) {
  const KlrContainer c = readContainer(bytes);
  KlrInfo info;
  info.header = c.header;
  info.format = c.metadata.format;
  info.kind = c.contents.kind;
  info.contents_ctor = c.contents.ctor;
  info.numbering = c.contents.numbering;
  info.neuronxsim_revision = c.neuronxsim_revision;
  info.lowering_refusal = refusalFor(c.contents);
  switch (c.contents.kind) {
    case ContentsKind::Python:
    case ContentsKind::Nki:
      info.entry = sourceEntry(c.contents.payload);
      break;
    case ContentsKind::Hlo:
      info.callsite = c.contents.payload.bytes;
      break;
    case ContentsKind::Kernel:
    case ContentsKind::Lnc: {
      const CoreKernel k = readCoreKernel(c.contents);
      info.kernel_name = k.name;
      for (const Item& tn : *k.inputs) info.inputs.push_back(tensorInfo(tn));
      for (const Item& tn : *k.outputs) info.outputs.push_back(tensorInfo(tn));
      info.bodies = k.bodies.size();
      for (const Item* body : k.bodies)
        for (const Item& block : body->items) {
          Record b(block, tags::Block, "Block");
          b.expectFields(3);
          info.statements += readList(b[2], "Block.body").size();
        }
      break;
    }
  }
  return info;
}

KlrInfo readKlrInfo(const std::string& path) {
  const std::string bytes = readFileBytes(path);
  return withPath(path, [&] { return inspectKlr(bytes); });
}

}  // namespace klr
