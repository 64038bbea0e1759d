# Build settings of libnxsim (included by cpp/CMakeLists.txt for the target `nxsim`).
#   -O2 -fvect-cost-model=dynamic
#                    the element loops (activations, ALU ops, reductions, conversions) are the
#                    product's hot paths; -O3's vectoriser cost model keeps them vectorised (at
#                    plain -O2 they are not, and a full-mode softmax takes 32% more instructions),
#                    without -O3's other passes, which made the batch a third slower to compile
#                    for no gain on them (callgrind: softmax, layernorm, an MLP chain within 0.5%);
#   -O3              the timing run's scheduler (Timing.cpp, with Hazards.h) and the decoder
#                    (Program.cpp): 5.6% more instructions per timing-mode instruction without it.
#                    Per-file options take these two out of the unity batch (two small compiles);
#   -ffp-contract=off  the engines round a*b and +c separately (docs/isa-semantics.md §2); the
#                      matmul kernel uses explicit FMA intrinsics, picked at run time.
#   -fno-plt         (Program.cpp) the decoder's calls into libBIR (the latency model and the
#                    legality rules, several per prepared instruction) go through the GOT, without
#                    a PLT stub each;
#   -Wl,-Bsymbolic-functions  libnxsim's calls to its own functions (the decoder's to the node-class
#                    checks) bind directly, not through the PLT. Nothing interposes libnxsim's
#                    functions (the C++ tests interpose libBIR's and libwalrus's). With libBIR's
#                    latency and legality files (cpp/CMakeLists.txt), preparation 2-8% faster by the
#                    clock (pip builds paired on the two CPUs, 2026-12-06, against fc49a8e);
#                    -fno-plt and -fno-semantic-interposition on the whole library made the timing
#                    run 3% slower.
# No -march: AVX2/FMA/F16C code is compiled per function (target attributes) and chosen at run
# time, so the wheel runs on any x86-64.
# (-fvect-cost-model is GCC's; clang, which the fuzz build uses, vectorises these loops at -O2 with
# its own cost model and refuses the flag.)
target_compile_options(nxsim PRIVATE -O2 $<$<CXX_COMPILER_ID:GNU>:-fvect-cost-model=dynamic> -ffp-contract=off)
target_link_options(nxsim PRIVATE -Wl,-Bsymbolic-functions)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/Program.cpp PROPERTIES COMPILE_OPTIONS "-O3;-fno-plt")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/Timing.cpp PROPERTIES COMPILE_OPTIONS -O3)
find_package(Threads REQUIRED)
target_link_libraries(nxsim PRIVATE Threads::Threads)
