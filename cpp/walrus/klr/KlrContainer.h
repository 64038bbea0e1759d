// The KLR file container (KLR/Serde/File.lean, KLR/File.lean; ../shared/reference/klr-container.md):
// three CBOR items back to back,
//
//   KLRFile      d9 d9f7 83 00 00 0c     self-described-CBOR magic + the version [0, 0, 12]
//   KLRMetaData  d9 eb00 81 <format>      a record holding the format string
//   Contents     d9 ecCC 81 <payload>     the tagged union of what the file holds
//
// and, in files written by neuronxsim (metadata format "neuronxsim-klr/<revision>"), a fourth item
// that KLR's readers never look at: the module record (tag 0xf800, see KernelFile.h).
//
// Contents constructor numbers differ between klr-lang 0.0.12 (python 0, nki 1, hlo 2) and
// upstream HEAD (python 0, nki 1, kernel 2, lnc 3, hlo 4), and both write the version 0.0.12, so
// the version cannot tell them apart. The payload can: hlo holds a text string, kernel a Core.Kernel
// record (tag 105), lnc a Core.LncKernel (tag 108). Contents_des therefore reads constructor 2 as
// the 0.0.12 call-site when its payload is text and as HEAD's kernel when it is a Kernel record,
// and refuses anything else.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "walrus/klr/KlrValue.h"

namespace klr {

struct KLRFileHeader {
  uint64_t major = 0, minor = 0, patch = 12;
  uint64_t offset = 0;
};

struct KLRMetaData {
  std::string format;
  uint64_t offset = 0;
};

// In upstream HEAD's constructor order.
enum class ContentsKind : uint8_t { Python, Nki, Kernel, Lnc, Hlo };
const char* contentsKindName(ContentsKind k);  // "python", "nki", "kernel", "lnc", "hlo"

struct Contents {
  ContentsKind kind = ContentsKind::Kernel;
  uint8_t ctor = 0;
  const char* numbering = "";  // "0.0.12", "HEAD", or "0.0.12 and HEAD" (python, nki)
  Item payload;                // the constructor's one argument
  uint64_t offset = 0;
};

// The format string neuronxsim writes, and the revision of its extensions this build reads.
inline constexpr std::string_view kNeuronxsimFormatPrefix = "neuronxsim-klr/";
inline constexpr int kNeuronxsimRevision = 1;
std::string neuronxsimFormat();  // "neuronxsim-klr/1"

// KLR's three readers, one per top-level item, named as libwalrus names them. Each reads the next
// item from the decoder and throws KLRError ("byte N: ...") when it is not what KLR writes.
KLRFileHeader KLRFile_des(cbor::Decoder& in);
KLRMetaData KLRMetaData_des(cbor::Decoder& in);
Contents Contents_des(cbor::Decoder& in);

// The writers. Contents_ser numbers constructors as upstream HEAD does (kernel 2, lnc 3).
Item KLRFile_ser(const KLRFileHeader& h = {});
Item KLRMetaData_ser(const std::string& format);
Item Contents_ser(ContentsKind kind, Item payload);

// A whole file: the three items, plus the module record of a neuronxsim file.
struct KlrContainer {
  KLRFileHeader header;
  KLRMetaData metadata;
  Contents contents;
  int neuronxsim_revision = 0;  // 0 when the file is not neuronxsim's
  std::optional<Item> module_record;
};

// Reads a whole file's bytes. Trailing bytes, a missing module record in a neuronxsim file, or a
// newer neuronxsim revision are KLRErrors.
KlrContainer readContainer(std::string_view bytes);

}  // namespace klr
