#include "walrus/klr/KlrContainer.h"

#include "bir/Error.h"

namespace klr {
const char* contentsKindName(ContentsKind k) {
  switch (k) {
    case ContentsKind::Python: return "python";
    case ContentsKind::Nki: return "nki";
    case ContentsKind::Kernel: return "kernel";
    case ContentsKind::Lnc: return "lnc";
    case ContentsKind::Hlo: return "hlo";
  }
  return "?";
}

std::string neuronxsimFormat() {
  return std::string(kNeuronxsimFormatPrefix) + std::to_string(kNeuronxsimRevision);
}

KLRFileHeader KLRFile_des(cbor::Decoder& in) {
  KLRFileHeader h;
  h.offset = in.position();
  if (in.atEnd()) cbor::failAt(h.offset, "empty input: not a KLR file");
  if (!in.startsWith("\xd9\xd9\xf7"))
    cbor::failAt(h.offset, "not a KLR file: it must start with the self-described CBOR magic d9 d9 f7");
  const Item it = in.next();
  Record r(it, tags::KLRFile, "KLRFile");
  r.expectFields(3);
  h.major = readNat(r[0], "KLRFile.major");
  h.minor = readNat(r[1], "KLRFile.minor");
  h.patch = readNat(r[2], "KLRFile.patch");
  const KLRFileHeader supported;
  if (h.major != supported.major || h.minor != supported.minor || h.patch != supported.patch)
    cbor::failAt(h.offset, "KLR version " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                               "." + std::to_string(h.patch) +
                               " is not supported (this reader reads 0.0.12, the version klr-lang "
                               "0.0.12 and upstream KLR write)");
  return h;
}

KLRMetaData KLRMetaData_des(cbor::Decoder& in) {
  KLRMetaData m;
  m.offset = in.position();
  const Item it = in.next();
  Record r(it, tags::KLRMetaData, "KLRMetaData");
  if (r.ctor() != 0) fail(it, "KLRMetaData", "KLRMetaData has one constructor (0)");
  r.expectFields(1);
  m.format = readString(r[0], "KLRMetaData.format");
  return m;
}

Contents Contents_des(cbor::Decoder& in) {
  Contents c;
  c.offset = in.position();
  const Item it = in.next();
  Record r(it, tags::Contents, "Contents");
  r.expectFields(1);
  c.ctor = r.ctor();
  c.payload = r[0];
  const bool text = c.payload.type == cbor::Type::Text;
  switch (c.ctor) {
    case 0:
      c.kind = ContentsKind::Python;
      c.numbering = "0.0.12 and HEAD";
      break;
    case 1:
      c.kind = ContentsKind::Nki;
      c.numbering = "0.0.12 and HEAD";
      break;
    case 2:
      if (text) {
        c.kind = ContentsKind::Hlo;
        c.numbering = "0.0.12";
      } else if (isRecordOf(c.payload, tags::Kernel)) {
        c.kind = ContentsKind::Kernel;
        c.numbering = "HEAD";
      } else {
        fail(c.payload, "Contents",
             "constructor 2 holds neither a call-site name (0.0.12's hlo) nor a Core.Kernel "
             "(HEAD's kernel, tag 105)");
      }
      break;
    case 3:
      if (!isRecordOf(c.payload, tags::LncKernel))
        fail(c.payload, "Contents", "constructor 3 (HEAD's lnc) must hold a Core.LncKernel (tag 108)");
      c.kind = ContentsKind::Lnc;
      c.numbering = "HEAD";
      break;
    case 4:
      if (!text) fail(c.payload, "Contents", "constructor 4 (HEAD's hlo) must hold a call-site name");
      c.kind = ContentsKind::Hlo;
      c.numbering = "HEAD";
      break;
    default:
      fail(it, "Contents",
           "unknown constructor " + std::to_string(c.ctor) +
               " (klr-lang 0.0.12 has python 0, nki 1, hlo 2; HEAD adds kernel 2, lnc 3, hlo 4)");
  }
  return c;
}

Item KLRFile_ser(const KLRFileHeader& h) {
  return record(tags::KLRFile, tags::KLRFileCtor, {nat(h.major), nat(h.minor), nat(h.patch)});
}

Item KLRMetaData_ser(const std::string& format) {
  return record(tags::KLRMetaData, 0, {cbor::text(format)});
}

Item Contents_ser(ContentsKind kind, Item payload) {
  std::vector<Item> f;
  f.push_back(std::move(payload));
  return record(tags::Contents, static_cast<uint8_t>(kind), std::move(f));  // HEAD's numbering
}

KlrContainer readContainer(std::string_view bytes) {
  cbor::Decoder in(bytes, klrDecodeOptions());
  KlrContainer c;
  c.header = KLRFile_des(in);
  c.metadata = KLRMetaData_des(in);
  c.contents = Contents_des(in);
  const std::string& format = c.metadata.format;
  if (format.compare(0, kNeuronxsimFormatPrefix.size(), kNeuronxsimFormatPrefix) == 0) {
    const std::string rev = format.substr(kNeuronxsimFormatPrefix.size());
    if (rev.empty() || rev.size() > 6 || rev.find_first_not_of("0123456789") != std::string::npos)
      cbor::failAt(c.metadata.offset, "metadata format '" + format + "' has no revision number");
    c.neuronxsim_revision = std::stoi(rev);
    if (c.neuronxsim_revision < 1 || c.neuronxsim_revision > kNeuronxsimRevision)
      cbor::failAt(c.metadata.offset, "the file uses neuronxsim KLR extensions revision " + rev +
                                          "; this build reads revision " +
                                          std::to_string(kNeuronxsimRevision));
    if (in.atEnd())
      cbor::failAt(in.position(), "the file ends after Contents, but its format '" + format +
                                      "' requires neuronxsim's module record there (truncated?)");
    c.module_record = in.next();
  }
  if (!in.atEnd())
    cbor::failAt(in.position(), std::to_string(bytes.size() - in.position()) +
                                    " unexpected byte(s) after the last item of the file");
  return c;
}

}  // namespace klr
