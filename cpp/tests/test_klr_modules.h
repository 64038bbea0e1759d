// Modules and files the KLR and walrus tests share.
#pragma once

#include <memory>
#include <string>

#include "bir/Module.h"

namespace klr_test {

// One function holding every executable node class (and an unmodeled opcode), with operand
// variants (bias and scale tensors, pointer scalars, indirect DMA, optional second outputs) and
// non-default fields, many of which KLR's operators cannot hold exactly.
void addEveryExecutableNodeFunction(bir::Module& m);
std::unique_ptr<bir::Module> everyExecutableNodeModule(int functions = 1);

// A traced "add" kernel: out = a + b over DRAM tensors of `rows` x `cols` float32, through SBUF,
// one function per core; core i handles the rows [i*rows/cores, (i+1)*rows/cores).
std::unique_ptr<bir::Module> addKernel(int64_t rows = 128, int64_t cols = 512, int cores = 1);

// The directory holding the klr-lang 0.0.12 samples and the other fuzz seeds.
std::string klrCorpusDir();
std::string readBytes(const std::string& path);

}  // namespace klr_test
