// Bindings of bir::View (cpp/bir/View.h), the one access-pattern algebra, into `_core.bir`.
#include "bindings.h"
#include "bir/Error.h"
#include "bir/Memory.h"
#include "bir/View.h"

namespace nxs::py_bind {
namespace {

using bir::APPair;
using bir::View;

void bindView(py::module_& m) {
  // A View points at its MemoryLocation: every View made from one keeps the location's owner
  // (the Python object it came from) alive, and every derived View keeps its parent alive.
  py::class_<View>(m, "View",
                   "bir::View: an access-pattern value over one memory location -- element offset, "
                   "logical [step, num] dims outermost first and, on chip, a partition range -- with "
                   "the view operations (slice, at, merge, flatten, flattenDims, reshape, rows, split, permute, "
                   "broadcast, "
                   "bitcast, normalised). Every operation returns a new view of the same elements; "
                   "ap() makes the operand.")
      .def(py::init([](bir::MemoryLocation* loc, bir::DType dtype, int64_t offset, std::vector<APPair> dims) {
             return View(loc, dtype, offset, std::move(dims));
           }),
           py::arg("location"), py::arg("dtype"), py::arg("offset"), py::arg("dims"), py::keep_alive<1, 2>(),
           "A DRAM view: `dims` ([step, num] pairs, outermost first) from element `offset` of `location` "
           "(None for a view of no location).")
      // A view's kind is a static string naming its class in errors; Python views are "View".
      .def_static("ofShape",
                  [](bir::MemoryLocation* loc, bir::DType dtype, const std::vector<int64_t>& shape) {
                    return View::ofShape(loc, dtype, shape);
                  },
                  py::arg("location"), py::arg("dtype"), py::arg("shape"), py::keep_alive<0, 1>(),
                  "The whole of `location` seen as a row-major array of `shape` elements of `dtype`.")
      .def_static("ofOperand",
                  [](const bir::AccessPattern& ap, const std::string& what) { return View::ofOperand(ap, what); },
                  py::arg("ap"), py::arg("what"), py::keep_alive<0, 1>(),
                  "The logical N-d view of a DRAM kernel-node operand (its partition-first pair moved back "
                  "to its dim); `what` names the operand in errors.")
      // The tracers' Python views are (offset, shape, strides) tuples: ofStrides and `strided` carry
      // them across in one call each, without a Python APPair per dim.
      .def_static("ofStrides",
                  [](int64_t offset, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
                    if (shape.size() != strides.size())
                      throw bir::BIRError("View::ofStrides: " + std::to_string(shape.size()) + " sizes and " +
                                          std::to_string(strides.size()) + " strides");
                    std::vector<APPair> dims(shape.size());
                    for (size_t d = 0; d < shape.size(); ++d) dims[d] = {strides[d], shape[d]};
                    return View(nullptr, bir::DType::float32, offset, std::move(dims));
                  },
                  py::arg("offset"), py::arg("shape"), py::arg("strides"),
                  "A view of no location counting elements: dim d of size shape[d] and step strides[d] from "
                  "element `offset` (a tracer's strided view).")
      .def_static("onChip",
                  [](bir::MemoryLocation* loc, bir::DType dtype, int64_t partitions, const std::vector<int64_t>& free) {
                    return View::onChip(loc, dtype, partitions, free);
                  },
                  py::arg("location"), py::arg("dtype"), py::arg("partitions"), py::arg("free"), py::keep_alive<0, 1>(),
                  "`partitions` partitions of the SB/PSUM `location` from its first row, contiguous free "
                  "dims of shape `free`.")
      .def_property_readonly("location", &View::location, py::return_value_policy::reference,
                             "The memory location viewed (None for a detached view).")
      .def_property_readonly("dtype", &View::dtype, "The element type; offsets and steps count its elements.")
      .def_property_readonly("offset", &View::offset, "Element 0's offset in the location, in elements.")
      .def_property_readonly("is_on_chip", &View::isOnChip, "Whether the view has a partition range (SB/PSUM).")
      .def_property_readonly("partitions", &View::partitions, "The partition range's size (1 for DRAM views).")
      .def_property_readonly("rank", &View::rank, "How many logical (on chip: free) dims the view has.")
      .def_property_readonly("dims", &View::dims, "The logical (on chip: free) dims as [step, num] pairs.")
      .def_property_readonly("shape", &View::shape, "The logical (on chip: free) dims' sizes.")
      .def_property_readonly(
          "strided",
          [](const View& v) {
            const auto& dims = v.dims();
            py::tuple shape(dims.size()), strides(dims.size());
            for (size_t d = 0; d < dims.size(); ++d) {
              shape[d] = py::int_(dims[d].num);
              strides[d] = py::int_(dims[d].step);
            }
            return py::make_tuple(v.offset(), shape, strides);
          },
          "(offset, shape, strides) as tuples of ints: the logical (on chip: free) dims' sizes and steps.")
      .def_property_readonly("num_elements", &View::numElements, "Elements the view addresses.")
      .def_property_readonly("row_elements", &View::rowElements,
                             "Elements of the dtype per partition row of an on-chip location, else 0.")
      .def("partitionRange", &View::partitionRange, py::arg("p0"), py::arg("n"), py::keep_alive<0, 1>(),
           "Partitions [p0, p0 + n) of an on-chip view.")
      .def("slice", static_cast<View (View::*)(size_t, int64_t, int64_t, int64_t) const&>(&View::slice), py::arg("dim"), py::arg("start"), py::arg("count"), py::arg("step") = 1,
           py::keep_alive<0, 1>(), "Elements start, start + step, ... (count of them) of dim `dim` (a negative step walks it backwards).")
      .def("at", static_cast<View (View::*)(size_t, int64_t) const&>(&View::at), py::arg("dim"), py::arg("index"), py::keep_alive<0, 1>(),
           "Element `index` of dim `dim`; the dim is dropped.")
      .def("merge", &View::merge, py::arg("dim"), py::keep_alive<0, 1>(),
           "Dims `dim` and `dim` + 1 as one (they must nest).")
      .def("flatten", py::overload_cast<>(&View::flatten, py::const_), py::keep_alive<0, 1>(),
           "Every dim as one: unit dims dropped, the others must nest.")
      .def("flattenDims", py::overload_cast<size_t, size_t>(&View::flatten, py::const_), py::arg("first"),
           py::arg("last"), py::keep_alive<0, 1>(),
           "Dims `first`..`last` (inclusive) as one: unit dims dropped, the rest must nest (the step "
           "of the innermost non-unit dim, 1 when none is left).")
      .def("reshape", &View::reshape, py::arg("shape"), py::keep_alive<0, 1>(),
           "The same elements in row-major order as `shape`, moving none (NumPy's no-copy reshape; a "
           "unit dim gets step 1); refused when that needs a copy.")
      .def("rows", &View::rows, py::keep_alive<0, 1>(),
           "Every dim but the last merged: the [rows, row elements] view.")
      .def("split", &View::split, py::arg("dim"), py::arg("inner"), py::keep_alive<0, 1>(),
           "Dim `dim` split into [num / inner, inner].")
      .def("permute", &View::permute, py::arg("order"), py::keep_alive<0, 1>(),
           "Dims reordered: result dim i is dim order[i].")
      .def("broadcast", &View::broadcast, py::arg("dim"), py::arg("n"), py::keep_alive<0, 1>(),
           "A new dim of n elements at position `dim` repeating the same elements (step 0).")
      .def("bitcast", &View::bitcast, py::arg("dtype"), py::keep_alive<0, 1>(),
           "The same bytes as `dtype` elements (the innermost dim contiguous and aligned).")
      .def("normalised", &View::normalised, py::keep_alive<0, 1>(),
           "Unit dims dropped and contiguous dims merged; the same elements in the same order.")
      .def("ap", &View::ap, py::keep_alive<0, 1>(),
           "The AccessPattern enumerating the view's elements (partition pair first on chip).")
      .def("partitionFirstPairs", &View::partitionFirstPairs, py::arg("partition_dim"),
           "A DRAM view's [step, num] pairs with dim `partition_dim`'s pair first (a kernel-node operand).")
      .def("__str__", &View::str)
      .def("__repr__", [](const View& v) { return "<View " + v.str() + ">"; });
}

}  // namespace
NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindView);
}  // namespace nxs::py_bind
