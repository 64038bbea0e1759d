"""The reference executor: a deliberately simple, independent NumPy executor of ISA-level BIR.

>>> from neuronxsim import reference
>>> outputs = reference.execute(module, {"x": x})        # doctest: +SKIP

It runs ``module.function(neuron_core_id)`` eagerly, one instruction at a time in program order
(blocks in order, instructions in order), the way the public NKI CPU simulator runs NKI ops. It
is the oracle for differential tests against the C++ simulator and the baseline for benchmarks,
so it is written from docs/isa-semantics.md alone and shares no code with the C++ semantics.
There is no time, no engine parallelism and no scheduling: program order is the only order.

Design
------
* ``executor``: verifies the module (``module.verify()``: structural problems are
  :class:`neuronxsim.BIRError`), builds the machine, loads the inputs, dispatches each
  instruction by opcode name and turns every refusal into a :class:`neuronxsim.SimulationError`
  whose message starts ``functions[i].blocks[j].instructions[k] 'name' OPCODE:``.
* ``machine``: SBUF and PSUM as ``[128, bytes]`` byte arrays shared by all on-chip locations (so
  overlapping locations alias), DRAM tensors as flat byte buffers, the 128 activation
  accumulator registers; access-pattern addressing by NumPy index arrays built from the
  ``[step, num]`` pairs, gathering/scattering each element's bytes (any dtype view, any address).
* ``step``: an instruction's operands as fp32 ``[P, F]`` arrays (lane by flattened free index);
  the contract's shape rules (same lanes, same elements per lane, ``[P,1]`` pointers) are
  checked there, once, and name the operand.
* ``numbers``: dtypes and the read/store conversions of contract section 2.
* ``alu`` and ``activation_functions``: the op tables of contract sections 3 and 4.
* ``ops``: one short function per opcode, grouped by family, each vectorised with NumPy over
  the whole instruction; ``ops.DISPATCH`` maps opcode names to them. Python loops remain only
  where the work is sequential along a lane (scans, non-associative folds, MatchReplace's eight
  searches), vectorised across lanes.

Interpretations of the contract
-------------------------------
Where docs/isa-semantics.md is silent or ambiguous, this executor does the following. Items
marked **(check)** are readings the C++ simulator may have made differently.

Memory and operands
  * New memory, on-chip and DRAM (Output and internal tensors too), is filled with 0xFF bytes:
    NaN in every float view; integer views read -1 or the type's max.
  * SBUF and PSUM are sized to the largest extent the function's locations use. An SB location
    ending beyond the SBUF partition size of ``Module.arch`` (gen2 192 KiB, gen3 224 KiB,
    gen4 256 KiB; an unknown arch gets the largest) is refused.
  * **(check)** Compute engines (every node class but DMA) address SBUF and PSUM only: a DRAM
    operand is refused. Matmult refuses an output outside PSUM (the contract says it is there).
  * Immediates are accepted as inputs wherever an operand's shape is known from another operand
    (broadcast to the output's lanes and elements, or one value per lane for ``[P,1]``
    pointers); refused where an operand's own shape defines the operation (copy and DMA
    sources, TensorReduce, BNStats, Max inputs, Matmult) and as outputs.
  * ``Instruction.engine``, DMA ``queue`` and ``dge_type`` have no functional effect: there is
    one in-order stream.
  * An instruction reads all its inputs before it writes. Two elements of one output pattern at
    the same address (a step of 0) end with the later one in enumeration order.
  * Safety limits, not hardware facts: at most 2^27 elements per operand and 4 GiB per DRAM
    tensor, so hostile modules are refused instead of exhausting the host.

Numbers
  * fp8 saturation applies to ±inf as well (they store as ±max finite).
  * **(check)** Exact-integer results (Iota, the MaxIndex/MatchReplace indices) store into
    integer dtypes exactly (saturating); into float dtypes through fp32. So the "not found"
    index 0xFFFFFFFF is exact in a uint32 output.
  * Memset's constant goes through fp32 like every engine result, but into an integer dtype,
    which takes the exact constant (rounded half to even, saturating).

ALU ops and folds
  * ``mod`` is ``numpy.mod`` (exact, sign of b), which the contract names; its formula
    ``a - b*floor(a/b)`` evaluated in fp32 can differ by rounding. **(check)**
  * Bit-vector ops on integer tiles run on 32-bit patterns (numbers.bits_of / from_bits), as the
    contract says. On float tiles (which the simulator refuses: rule alu.bitvec-dtype) they run
    on fp32 values: ``int32(NaN) = 0``; **(check)** ``uint32(x)`` (logical shifts) truncates
    toward zero and saturates to [0, 2^32 - 1], NaN -> 0, by analogy with ``int32(x)``.
  * ``rsqrt`` is ``1 / sqrt(a)`` with two fp32 roundings; ``average`` is ``(a + b) * 0.5`` in fp32.
  * ``pow`` is evaluated in float64 and rounded once (NumPy's float32 power depends on the host).
  * Folds: add uses NumPy's pairwise sum (the contract allows it), max and min NumPy reductions
    (exact), every other op runs sequentially in fp32 from the first element; a fold of one
    element is that element, unchanged.

Instructions
  * Activation: ``in * scale + bias`` in fp32 (two roundings, no fused multiply-add); the
    function in float64, rounded once to fp32 (Gelu as ``x * Phi(x)`` via erfc, the same
    function, accurate in the tails); ``alpha`` rounded to fp32. **(check)** The accumulator
    folds the fp32 results before the store conversion to the output's dtype. The register of
    lane i is the absolute partition of ``outs[0]``'s lane i.
  * ReadActivationAccumulator's output must have one element per partition.
  * **(check)** TensorReduce refuses ``XYZWC`` as well as ``C``: it folds the partition dim.
  * **(check)** TensorCopyDynamicSrc/Dst copy bit-exactly when the dtypes match, as TensorCopy
    does. The offset is ``int32`` of the fp32 value of ``ins[1]``'s first element. A moved
    pattern must keep its partitions and stay inside one row (SB/PSUM) or inside the tensor
    (DRAM), the verifier's rules for static patterns.
  * TensorCopy on the Scalar Engine of NeuronCore-v2 (``gen2``) goes through fp32 even when the
    dtypes match ("performs copy by first casting the input tile to FP32", NKI 2.2x docs).
  * Memset Random uses ``numpy.random.default_rng`` seeded by the instruction's
    ``(function, block, instruction)`` indices. Dropout draws from the Vector Engine's xorwow
    generators as the simulator does (the same drops); it refuses a ``prob`` outside [0, 1].
  * **(check)** BNStats: an empty odd group (one element per lane) is ``(0, 0, 0)``.
    BNStatsAggregate: the input's elements per lane must be a multiple of 3; a lane whose
    counts are all 0 gets NaN mean and variance.
  * StreamShuffle: ``shuffle_mask`` must have exactly 32 entries, each a lane 0..31 or 255;
    lanes are the operands' lanes (not absolute partitions); the source lane must exist.
  * TensorScalarAffineSelect: ``compare_op`` is applied by the ALU table to ``(fp32(e), 0)``,
    nonzero meaning keep (exact for the comparisons: rounding keeps the sign of e).
  * RangeSelect's and SelectReduce's second outputs fold the fp32 results before conversion.
  * Max: NaN ranks above +inf (NumPy's sort order), so NaNs come first.
  * MaxIndex/MatchReplace: ``ins[1]`` has exactly 8 elements per lane; values match by fp32
    equality (NaN matches nothing). MatchReplace tracks which elements it replaced, so
    ``imm_value`` never matches a later search; its output has ``ins[0]``'s shape.
  * Matmult: the product is ``numpy.matmul`` in fp32 (BLAS summation order). Accumulation groups
    live in the PSUM data: ``start_tensor_calc`` overwrites, otherwise fp32 read-add-write, and
    accumulating where no group was started reads whatever PSUM holds (NaN if never written).
    ``stop_tensor_calc``, ``tile_position``, ``tile_size`` and ``perf_mode`` have no functional
    effect. **(check)** Transpose mode writes whatever ``start_tensor_calc`` says, converts
    through fp32 only when the dtypes differ, and requires ``moving`` to be ``[K, K]``.
  * DMA: source and destination element counts must match. Modes other than Copy and Transpose
    and ``dst_rmw_op`` other than bypass and add are refused. Transpose: the source's pairs of
    num 1 are dropped and at most two dims may remain. **(check)** Indirect: the index operand
    must hold integers, one per destination row; an index is in range when it is below the
    source pattern's outermost num; ``indirect_dim`` must be -1 or 0; indirect with Transpose
    is refused; ``dst_rmw_op = add`` applies to the gathered rows.
  * DevicePrint prints ``prefix`` immediately followed by the operand's fp32 values, shaped
    ``[P, free dims...]``, to stdout.
"""

from neuronxsim.reference.executor import execute

__all__ = ["execute"]
