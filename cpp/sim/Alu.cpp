#include "Alu.h"

namespace sim {

bool isComparison(AluOp op) {
  switch (op) {
    case AluOp::is_equal:
    case AluOp::not_equal:
    case AluOp::is_ge:
    case AluOp::is_gt:
    case AluOp::is_le:
    case AluOp::is_lt:
      return true;
    default:
      return false;
  }
}

}  // namespace sim
