// An instruction's `source` ("kernel.py:12") <-> KLR's Core.Pos (tag 100):
//   Pos {line, column, lineEnd?, columnEnd?, filename?}   (klr-lang 0.0.12 writes the first four)
//
// "FILE:LINE" with LINE >= 1 in canonical decimal becomes {LINE, 0, none, none, some FILE}; any
// other non-empty source is kept whole as {0, 0, none, none, some SOURCE}; "" is {0, 0, none, none,
// none}. Reading inverts this exactly; a Pos without a filename but with a line (KLR-written) reads
// as "line N".
#pragma once

#include <string>

#include "walrus/klr/KlrValue.h"

namespace klr {

Item sourcePosItem(const std::string& source);
std::string readSourcePos(const Item& pos, const std::string& what);

}  // namespace klr
