#include "TestModules.h"

#include <limits>

namespace nxs_test {

using namespace bir;

std::unique_ptr<Module> buildEveryNodeModule() {
  auto m = std::make_unique<Module>();
  m->arch = "gen3";
  Function* f = m->addFunction();
  f->attributes = {"need_dce"};
  auto* in = f->createDramTensor("in", MemoryType::Input, DType::bfloat16, {4, 64}, TensorKind::ExternalInput);
  auto* out = f->createDramTensor("out", MemoryType::Output, DType::float32, {4, 64}, TensorKind::ExternalOutput);
  auto* sb = f->createOnChipTensor("tile", MemoryType::SB, DType::float32, 128, 4096, 0, 1024);
  auto* ps = f->createOnChipTensor("acc", MemoryType::PSUM, DType::float32, 128, 2048, 0, 2048);
  BasicBlock* bb = f->addBlock("main");
  const AccessPattern sbTile = Instruction::createAP(sb, 0, {{1024, 128}, {1, 16}}, {}, -1);
  const AccessPattern psTile = Instruction::createAP(ps, 0, {{512, 128}, {1, 16}}, {}, -1);
  for (int i = 0; i < InstructionType::kCount; ++i) {
    const auto op = static_cast<Opcode>(i);
    Instruction* I = bb->addInstruction(op);
    const OperandRule rule = operandRuleOf(I->nodeClass());
    const bool kernel = isa<InstBIRKernel>(I) || isa<InstNKIKernel>(I) || isa<InstNKIKLIRKernel>(I);
    for (int k = 0; k < rule.min_ins; ++k) I->ins.push_back(sbTile);
    for (int k = 0; k < rule.min_outs; ++k) I->outs.push_back(sbTile);
    if (kernel) {
      I->addSeqAccess(in, false);
      I->addOpaqueAP(out, true);
    }
    I->engine = Engine::DVE;
    if (auto* a = dyn_cast<InstActivation>(I)) {
      a->engine = Engine::Activation;
      a->func = ActivationFunc::Gelu_apprx_tanh;
      a->scale = 0.125;
      a->acc = AccumCmd::ZeroAccumulate;
      a->acc_op = AluOp::max;
    } else if (auto* mm = dyn_cast<InstMatmult>(I)) {
      mm->engine = Engine::PE;
      mm->outs[0] = psTile;
      mm->start_tensor_calc = false;
      mm->tile_position = {0, 64};
      mm->tile_size = {64, 64};
      mm->perf_mode = PerfMode::DoubleRow;
    } else if (auto* d = dyn_cast<InstDMA>(I)) {
      d->engine = Engine::SP;
      d->queue = 7;
      d->dst_rmw_op = AluOp::add;
      d->dge_type = DgeType::HWDGE;
    } else if (auto* s = dyn_cast<InstAffineSelect>(I)) {
      s->engine = Engine::Pool;
      s->pattern = {{-1, 16}};
      s->channel_multiplier = 1;
      s->fill_value = -std::numeric_limits<double>::infinity();
    } else if (auto* ts = dyn_cast<InstTensorScalar>(I)) {
      ts->op0 = AluOp::subtract;
      ts->const0 = 1.5;
      ts->reverse0 = true;
      ts->op1 = AluOp::mult;
      ts->const1 = -2.25e-7;
    } else if (auto* sh = dyn_cast<InstStreamShuffle>(I)) {
      for (int k = 0; k < 32; ++k) sh->shuffle_mask.push_back((k * 7) % 32);
    } else if (auto* k = dyn_cast<InstBIRKernel>(I)) {
      k->kernel_name = "MLP";
      k->kernel_attrs = {{"eps", "1e-06"}, {"act_fn", "SiLU"}};
      k->srcs_shape = {{4, 64}};
      k->dsts_shape = {{4, 64}};
      k->sb_buf_shape = {128, 196608};
      k->psum_buf_shape = {128, 8, 2048};
      k->auto_cast = "matmult";
      k->auto_cast_type = "bfloat16";
      k->fused_rmsnorm = true;
      k->norm_type = 1;
      k->lower_bound = 0.5;
      k->is_tkg = false;
    } else if (auto* u = dyn_cast<InstNKIKernel>(I)) {
      u->func = "nki/add_kernel.0123456789abcdef.json";
      u->func_args = {"a", "b"};
      u->func_outs = {"out"};
    } else if (auto* c = dyn_cast<InstNKIKLIRKernel>(I)) {
      c->klir_binary = "/tmp/kernel.klr";
      c->kernel_format = "klir";
      c->nki_binary_version_identifier = "0.0.12";
      c->func_name = "tiled_pf_transpose";
      c->grid = 2;
    } else if (isa<InstUnmodeled>(I)) {
      I->extra_json = R"({"queue_id":3,"flags":["a","b"],"nested":{"x":null}})";
    } else if (isa<InstNoOp>(I)) {
      I->ins.push_back(AccessPattern::immediate(0.25, DType::float16));
    }
    I->source = "kernel.py:" + std::to_string(10 + i);
  }
  return m;
}

}  // namespace nxs_test
