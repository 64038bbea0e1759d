// visitNode(I, f): calls f with the instruction cast to its node class (Inst<Class>&, const when I
// is const), so generic code can walk T::fields() of any node: the one switch over the node
// classes that BIR JSON, BIR binary, the emitter, cloning and KLR attributes share.
#pragma once

#include <type_traits>

#include "KernelInstructions.h"

namespace bir {

template <class InstT, class F>
decltype(auto) visitNode(InstT& I, F&& f) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C) \
  case NodeClass::C:      \
    return f(static_cast<std::conditional_t<std::is_const_v<InstT>, const Inst##C, Inst##C>&>(I));
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
  }
  __builtin_unreachable();  // the switch covers every node class
}

}  // namespace bir
