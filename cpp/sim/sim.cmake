# Build settings of libnxsim (included by cpp/CMakeLists.txt for the target `nxsim`).
#   -O3              the element loops and the matmul kernel are the product's hot paths;
#   -ffp-contract=off  the engines round a*b and +c separately (docs/isa-semantics.md §2); the
#                      matmul kernel uses explicit FMA intrinsics, picked at run time.
# No -march: AVX2/FMA/F16C code is compiled per function (target attributes) and chosen at run
# time, so the wheel runs on any x86-64.
target_compile_options(nxsim PRIVATE -O3 -ffp-contract=off)
find_package(Threads REQUIRED)
target_link_libraries(nxsim PRIVATE Threads::Threads)
