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

bool isBitwise(AluOp op) {
  switch (op) {
    case AluOp::bitwise_and:
    case AluOp::bitwise_or:
    case AluOp::bitwise_xor:
    case AluOp::bitwise_not:
    case AluOp::arith_shift_left:
    case AluOp::arith_shift_right:
    case AluOp::logical_shift_left:
    case AluOp::logical_shift_right:
      return true;
    default:
      return false;
  }
}

}  // namespace sim
