// visitNode(I, f): calls f with the instruction cast to its node class (bir::Inst<Class>&, const
// when I is const), so generic code can walk T::fields() of any node.
#pragma once

#include <type_traits>

#include "bir/KernelInstructions.h"

namespace walrus {

template <class InstT, class F>
decltype(auto) visitNode(InstT& I, F&& f) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C)                                                               \
  case bir::NodeClass::C:                                                               \
    return f(static_cast<std::conditional_t<std::is_const_v<InstT>, const bir::Inst##C, \
                                            bir::Inst##C>&>(I));
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS
  }
  __builtin_unreachable();  // the switch covers every node class
}

}  // namespace walrus
