#include "test_klr_modules.h"

#include <fstream>
#include <limits>
#include <sstream>

namespace klr_test {

using namespace bir;

namespace {

class Builder {
 public:
  explicit Builder(Function& f) : bb_(f.addBlock("main")) {}
  Instruction* add(Opcode op, std::vector<AccessPattern> ins, std::vector<AccessPattern> outs,
                   Engine engine = Engine::DVE) {
    Instruction* I = bb_->addInstruction(op);
    I->ins = std::move(ins);
    I->outs = std::move(outs);
    I->engine = engine;
    I->source = "every_node.py:" + std::to_string(++line_);
    return I;
  }
  template <class T>
  T* add(std::vector<AccessPattern> ins, std::vector<AccessPattern> outs, Engine engine = Engine::DVE) {
    return cast<T>(add(T::kOpcode, std::move(ins), std::move(outs), engine));
  }

 private:
  BasicBlock* bb_;
  int line_ = 0;
};

// A plain ISA operand (Instruction::createAP would mark it as a kernel-node tile access).
AccessPattern ap(MemoryLocation* t, int64_t offset, std::vector<APPair> pattern) {
  AccessPattern a;
  a.loc = t;
  a.dtype = t->set->dtype;
  a.offset = offset;
  a.pattern = std::move(pattern);
  return a;
}

AccessPattern retyped(AccessPattern a, DType t) {
  a.dtype = t;
  return a;
}

}  // namespace

void addEveryExecutableNodeFunction(Module& m) {
  Function& f = *m.addFunction();
  f.attributes = {"need_dce"};
  auto* in = f.createDramTensor("in", MemoryType::Input, DType::float32, {128, 64}, TensorKind::ExternalInput);
  auto* idx = f.createDramTensor("idx", MemoryType::Input, DType::int32, {128}, TensorKind::ExternalInput);
  auto* out = f.createDramTensor("out", MemoryType::Output, DType::float32, {128, 64}, TensorKind::ExternalOutput);
  auto* scratch = f.createDramTensor("scratch", MemoryType::DRAM, DType::bfloat16, {64, 64});
  auto* a = f.createOnChipTensor("a", MemoryType::SB, DType::float32, 128, 1024, 0, 0);
  auto* b = f.createOnChipTensor("b", MemoryType::SB, DType::bfloat16, 64, 512, 64, 4096, {64, 16, 16});
  auto* p = f.createOnChipTensor("p", MemoryType::SB, DType::float32, 128, 4, 0, 8192);
  auto* ps = f.createOnChipTensor("ps", MemoryType::PSUM, DType::float32, 128, 2048, 0, 0);

  const AccessPattern A = ap(a, 0, {{256, 128}, {1, 64}}), A2 = ap(a, 64, {{256, 128}, {1, 64}});
  const AccessPattern A8 = ap(a, 128, {{256, 128}, {1, 8}}), A6 = ap(a, 160, {{256, 128}, {1, 6}});
  const AccessPattern A2col = ap(a, 192, {{256, 128}, {1, 2}}), Ahalf = ap(a, 0, {{256, 64}, {1, 64}});
  const AccessPattern T32 = ap(a, 0, {{256, 32}, {1, 32}}), T32b = ap(a, 64, {{256, 32}, {1, 32}});
  const AccessPattern P = ap(p, 0, {{1, 128}, {1, 1}}), PS = ap(ps, 0, {{512, 64}, {1, 64}});
  const AccessPattern B = ap(b, 0, {{256, 64}, {1, 64}});
  const AccessPattern IN = ap(in, 0, {{64, 128}, {1, 64}}), OUT = ap(out, 0, {{64, 128}, {1, 64}});
  const AccessPattern IDX = ap(idx, 0, {{1, 128}, {1, 1}}), SCR = ap(scratch, 0, {{64, 64}, {1, 64}});
  const AccessPattern A8u = retyped(A8, DType::uint32);

  Builder x(f);
  auto* dma = cast<InstDMA>(x.add(InstructionType::DMA, {IN}, {A}, Engine::SP));
  dma->queue = 3;
  dma->dge_type = DgeType::SWDGE;
  auto* load = cast<InstDMA>(x.add(InstructionType::Load, {IN, IDX}, {A2}, Engine::SP));
  load->indirect_dim = 0;
  load->oob_is_err = false;

  auto* act = x.add<InstActivation>({A, P, P}, {A2}, Engine::Activation);
  act->func = ActivationFunc::Gelu_apprx_tanh;
  act->scale = 0.1;  // not a float32: travels as an extension attribute
  act->alpha = 0.01;
  act->acc = AccumCmd::ZeroAccumulate;
  act->acc_op = AluOp::max;
  act->has_bias = act->has_scale_tensor = true;
  auto* identity = x.add<InstActivation>({A}, {A}, Engine::Activation);
  identity->func = ActivationFunc::Identity;  // KLR has no Identity
  identity->scale = 2.0;
  x.add<InstActivation>({A}, {A2}, Engine::Activation)->func = ActivationFunc::Exp;
  x.add<InstReadActivationAccumulator>({}, {P}, Engine::Activation);

  x.add<InstMemset>({}, {A}, Engine::Pool)->constant = 3.0;
  x.add<InstMemset>({}, {A2})->mode = MemsetMode::Random;
  x.add<InstNoOp>({AccessPattern::immediate(0.25, DType::float16)}, {});
  x.add<InstReciprocal>({A}, {A2}, Engine::Pool);
  x.add<InstTensorCopy>({Ahalf}, {B}, Engine::Pool);
  cast<InstTensorCopyDynamic>(x.add(InstructionType::TensorCopyDynamicSrc, {A, P}, {A2}))->dynamic_step = 2;

  auto* red = x.add<InstTensorReduce>({A}, {P});
  red->op = AluOp::max;
  red->negate = true;
  x.add<InstTensorReduce>({A}, {P})->axis = ReduceAxis::C;

  auto* ts = x.add<InstTensorScalar>({A}, {A2}, Engine::Activation);
  ts->op0 = AluOp::subtract;
  ts->const0 = 1.5;
  ts->reverse0 = true;
  ts->op1 = AluOp::mult;
  ts->const1 = -2.25e-7;
  x.add<InstTensorScalar>({A}, {A2})->const0 = 0.5;
  auto* tsp = x.add<InstTensorScalarPtr>({A, P, P}, {A2});
  tsp->op0 = AluOp::add;
  tsp->op1 = AluOp::max;
  tsp->reverse1 = true;
  auto* tsp2 = x.add<InstTensorScalarPtr>({A, P}, {A});
  tsp2->op1 = AluOp::add;
  tsp2->const1 = 0.5;

  auto* tt = x.add<InstTensorTensor>({A, A2}, {A}, Engine::Pool);
  tt->op = AluOp::divide;
  tt->kernel = "inner_kernel";
  tt->extra_json = R"({"can_read_uninit":true})";
  x.add<InstTensorTensorScan>({A, A2, P}, {A});
  auto* scan = x.add<InstTensorTensorScan>({A, A2}, {A2});
  scan->initial = 0.5;
  scan->op0 = AluOp::max;
  scan->op1 = AluOp::subtract;

  x.add<InstBNStats>({A}, {A6});
  x.add<InstBNStatsAggregate>({A6}, {A2col});
  auto* shuffle = x.add<InstStreamShuffle>({T32}, {T32b});
  for (int k = 0; k < 32; ++k) shuffle->shuffle_mask.push_back(k == 5 ? 255 : (k * 7) % 32);
  x.add<InstStreamTranspose>({T32}, {T32b});

  auto* iota = x.add<InstIota>({}, {A}, Engine::Pool);
  iota->base = -3;
  iota->pattern = {{8, 8}, {1, 8}};
  iota->channel_multiplier = 64;
  auto* asel = x.add<InstAffineSelect>({A}, {A2}, Engine::Pool);
  asel->base = 5;
  asel->pattern = {{-1, 64}};
  asel->channel_multiplier = 1;
  asel->compare_op = AluOp::is_gt;
  asel->fill_value = -std::numeric_limits<double>::infinity();
  auto* rs = x.add<InstRangeSelect>({A, P, P}, {A2, P});
  rs->comp_op0 = AluOp::is_gt;
  rs->comp_op1 = AluOp::is_le;
  rs->range_start = 5;
  rs->fill_value = -1e30;

  x.add<InstSelect>({A, A2, A}, {A});
  x.add<InstSelectReduce>({A, A2, A}, {A, P})->reduce_op = AluOp::add;
  x.add<InstSelectReduce>({A, A2}, {A2})->on_false_value = -7;
  x.add<InstCopyPredicated>({A, A2}, {A});
  x.add<InstDropout>({A}, {A2})->prob = 0.25;
  x.add<InstMax>({A}, {A8});
  x.add<InstMaxIndex>({A, A8}, {A8u});
  x.add<InstMatchReplace>({A, A8}, {A2, A8u})->imm_value = -1;

  auto* mm = x.add<InstMatmult>({A, A2}, {PS}, Engine::PE);
  mm->start_tensor_calc = mm->stop_tensor_calc = false;
  mm->tile_position = {0, 64};
  mm->tile_size = {64, 64};
  mm->perf_mode = PerfMode::DoubleColumn;
  auto* mmT = x.add<InstMatmult>({A, A2}, {PS}, Engine::PE);
  mmT->is_transpose = true;
  mmT->perf_mode = PerfMode::DoubleRow;

  auto* store = cast<InstDMA>(x.add(InstructionType::DMACopy, {A}, {OUT}, Engine::Activation));
  store->dst_rmw_op = AluOp::add;
  store->queue = 1;
  auto* save = cast<InstDMA>(x.add(InstructionType::Save, {A}, {OUT}, Engine::SP));
  save->mode = DmaMode::Transpose;
  save->dst_rmw_op = AluOp::max;
  x.add(InstructionType::DMA, {B}, {SCR}, Engine::SP);
  x.add<InstDevicePrint>({A}, {})->prefix = "acc=";
  x.add(InstructionType::Drain, {}, {}, Engine::SP)->extra_json = R"({"queue_id":3,"flags":["a"]})";
  x.add<InstNoOp>({}, {})->source = "a:b:0";
  x.add<InstNoOp>({}, {})->source = "";
}

std::unique_ptr<Module> everyExecutableNodeModule(int functions) {
  auto m = std::make_unique<Module>();
  m->arch = "gen3";
  m->neuron_core_id = 1;
  for (int i = 0; i < functions; ++i) addEveryExecutableNodeFunction(*m);
  return m;
}

std::unique_ptr<Module> addKernel(int64_t rows, int64_t cols, int cores) {
  auto m = std::make_unique<Module>();
  const int64_t r = rows / cores;
  for (int c = 0; c < cores; ++c) {
    Function& f = *m->addFunction();
    auto* a = f.createDramTensor("a", MemoryType::Input, DType::float32, {rows, cols}, TensorKind::ExternalInput);
    auto* b = f.createDramTensor("b", MemoryType::Input, DType::float32, {rows, cols}, TensorKind::ExternalInput);
    auto* out = f.createDramTensor("out", MemoryType::Output, DType::float32, {rows, cols}, TensorKind::ExternalOutput);
    const int64_t bytes = cols * 4;
    auto* ta = f.createOnChipTensor("ta", MemoryType::SB, DType::float32, r, bytes, 0, 0);
    auto* tb = f.createOnChipTensor("tb", MemoryType::SB, DType::float32, r, bytes, 0, bytes);
    auto* tc = f.createOnChipTensor("tc", MemoryType::SB, DType::float32, r, bytes, 0, 2 * bytes);
    BasicBlock* bb = f.addBlock("body");
    auto tile = [&](MemoryLocation* t) { return ap(t, 0, {{cols, r}, {1, cols}}); };
    auto rowsOf = [&](MemoryLocation* t) { return ap(t, c * r * cols, {{cols, r}, {1, cols}}); };
    auto add = [&](const char* name, Opcode op, AccessPattern in0, std::vector<AccessPattern> more,
                   AccessPattern o, Engine e, const char* src) {
      Instruction* I = bb->addInstruction(op, name);
      I->ins = {in0};
      for (auto& x : more) I->ins.push_back(x);
      I->outs = {o};
      I->engine = e;
      I->source = src;
      return I;
    };
    add("load_a", InstructionType::DMA, rowsOf(a), {}, tile(ta), Engine::SP, "add.py:3");
    add("load_b", InstructionType::DMA, rowsOf(b), {}, tile(tb), Engine::SP, "add.py:4");
    add("add", InstructionType::TensorTensor, tile(ta), {tile(tb)}, tile(tc), Engine::DVE, "add.py:5");
    add("store", InstructionType::DMA, tile(tc), {}, rowsOf(out), Engine::SP, "add.py:6");
  }
  return m;
}

// cpp/fuzz/corpus/klr.
std::string klrCorpusDir() {
  return std::string(NXS_FUZZ_CORPUS_DIR) + "/klr";
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace klr_test
