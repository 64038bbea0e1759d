"""
libBIR: opcodes, node classes, modules, BIR JSON
"""
from __future__ import annotations
import collections.abc
import typing
__all__: list[str] = ['APPair', 'AccessFlavour', 'AccessPattern', 'AccumCmd', 'ActivationFunc', 'AddrSpace', 'AluOp', 'BIR_VERSION', 'BasicBlock', 'DType', 'DgeType', 'DmaMode', 'Engine', 'FORMAT_VERSION', 'Function', 'InstActivation', 'InstAffineSelect', 'InstBIRKernel', 'InstBNStats', 'InstBNStatsAggregate', 'InstCopyPredicated', 'InstDMA', 'InstDevicePrint', 'InstDropout', 'InstGather', 'InstGetRandState', 'InstIota', 'InstLocalGather', 'InstMatchReplace', 'InstMatmult', 'InstMax', 'InstMaxIndex', 'InstMemset', 'InstNKIKLIRKernel', 'InstNKIKernel', 'InstNoOp', 'InstNonzeroWithCount', 'InstRand', 'InstRangeSelect', 'InstReadActivationAccumulator', 'InstReciprocal', 'InstScalarTensorTensor', 'InstSelect', 'InstSelectReduce', 'InstSequenceBounds', 'InstSetRandState', 'InstStreamShuffle', 'InstStreamTranspose', 'InstTensorCopy', 'InstTensorCopyDynamic', 'InstTensorPartitionReduce', 'InstTensorReduce', 'InstTensorScalar', 'InstTensorScalarPtr', 'InstTensorScalarReduce', 'InstTensorTensor', 'InstTensorTensorScan', 'InstUnmodeled', 'Instruction', 'LegalityOperand', 'LegalityRule', 'LegalitySpace', 'LegalityViolation', 'MemoryLocation', 'MemoryLocationSet', 'MemoryType', 'MemsetMode', 'Module', 'PerfMode', 'ReduceAxis', 'TensorKind', 'View', 'arch_aliases', 'canonical_arch', 'check_start_partition', 'dtype_size', 'emit_trace', 'field_offsets', 'instruction_type_string', 'known_archs', 'legality_activation_reduce', 'legality_alu_ops', 'legality_bitvec_dtypes', 'legality_bn_stats', 'legality_dma', 'legality_dma_trigger', 'legality_dve_transpose', 'legality_engine_operand', 'legality_generation', 'legality_is_bitvec_op', 'legality_is_reduce_op', 'legality_local_gather', 'legality_matmul', 'legality_max8_family', 'legality_partition_reduce_op', 'legality_pe_input_dtypes', 'legality_psum_inputs', 'legality_reduce_op', 'legality_register_fold', 'legality_rules', 'machine_config', 'opcode_categories', 'opcode_names', 'opcode_node_classes', 'opcode_origins', 'string2InstructionType']
class Engine:
    """
    Members:
    
      Unassigned
    
      Pool
    
      Activation
    
      PE
    
      DMA
    
      DVE
    
      SP
    """
    Activation: typing.ClassVar[Engine]
    DMA: typing.ClassVar[Engine]
    DVE: typing.ClassVar[Engine]
    PE: typing.ClassVar[Engine]
    Pool: typing.ClassVar[Engine]
    SP: typing.ClassVar[Engine]
    Unassigned: typing.ClassVar[Engine]
    __members__: typing.ClassVar[dict[str, Engine]]
    @typing.overload
    def __eq__(self, other: Engine) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Engine) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class ActivationFunc:
    """
    Members:
    
      Abs
    
      Abs_reciprocal_sqrt
    
      Arctan
    
      Copy
    
      Derivative_Erf
    
      Derivative_Gelu
    
      Derivative_silu
    
      Dsqrt
    
      Erf
    
      Exp
    
      Gelu
    
      Gelu_apprx_sigmoid
    
      Gelu_apprx_tanh
    
      Identity
    
      Is_finite
    
      Ln
    
      Ln_prime
    
      Lrelu
    
      MemsetZero
    
      Mish
    
      Prelu
    
      Reciprocal
    
      Relu
    
      Rsqrt
    
      Sigmoid
    
      Sign
    
      Silu
    
      Sin
    
      Softplus
    
      Sqrt
    
      Square
    
      Tanh
    
      Unknown
    """
    Abs: typing.ClassVar[ActivationFunc]
    Abs_reciprocal_sqrt: typing.ClassVar[ActivationFunc]
    Arctan: typing.ClassVar[ActivationFunc]
    Copy: typing.ClassVar[ActivationFunc]
    Derivative_Erf: typing.ClassVar[ActivationFunc]
    Derivative_Gelu: typing.ClassVar[ActivationFunc]
    Derivative_silu: typing.ClassVar[ActivationFunc]
    Dsqrt: typing.ClassVar[ActivationFunc]
    Erf: typing.ClassVar[ActivationFunc]
    Exp: typing.ClassVar[ActivationFunc]
    Gelu: typing.ClassVar[ActivationFunc]
    Gelu_apprx_sigmoid: typing.ClassVar[ActivationFunc]
    Gelu_apprx_tanh: typing.ClassVar[ActivationFunc]
    Identity: typing.ClassVar[ActivationFunc]
    Is_finite: typing.ClassVar[ActivationFunc]
    Ln: typing.ClassVar[ActivationFunc]
    Ln_prime: typing.ClassVar[ActivationFunc]
    Lrelu: typing.ClassVar[ActivationFunc]
    MemsetZero: typing.ClassVar[ActivationFunc]
    Mish: typing.ClassVar[ActivationFunc]
    Prelu: typing.ClassVar[ActivationFunc]
    Reciprocal: typing.ClassVar[ActivationFunc]
    Relu: typing.ClassVar[ActivationFunc]
    Rsqrt: typing.ClassVar[ActivationFunc]
    Sigmoid: typing.ClassVar[ActivationFunc]
    Sign: typing.ClassVar[ActivationFunc]
    Silu: typing.ClassVar[ActivationFunc]
    Sin: typing.ClassVar[ActivationFunc]
    Softplus: typing.ClassVar[ActivationFunc]
    Sqrt: typing.ClassVar[ActivationFunc]
    Square: typing.ClassVar[ActivationFunc]
    Tanh: typing.ClassVar[ActivationFunc]
    Unknown: typing.ClassVar[ActivationFunc]
    __members__: typing.ClassVar[dict[str, ActivationFunc]]
    @typing.overload
    def __eq__(self, other: ActivationFunc) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ActivationFunc) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class AluOp:
    """
    Members:
    
      abs
    
      add
    
      arith_shift_left
    
      arith_shift_right
    
      average
    
      bitwise_and
    
      bitwise_not
    
      bitwise_or
    
      bitwise_xor
    
      bypass
    
      divide
    
      is_equal
    
      is_ge
    
      is_gt
    
      is_le
    
      is_lt
    
      logical_and
    
      logical_or
    
      logical_xor
    
      logical_shift_left
    
      logical_shift_right
    
      max
    
      min
    
      mod
    
      mult
    
      not_equal
    
      pow
    
      rsqrt
    
      subtract
    """
    __members__: typing.ClassVar[dict[str, AluOp]]
    abs: typing.ClassVar[AluOp]
    add: typing.ClassVar[AluOp]
    arith_shift_left: typing.ClassVar[AluOp]
    arith_shift_right: typing.ClassVar[AluOp]
    average: typing.ClassVar[AluOp]
    bitwise_and: typing.ClassVar[AluOp]
    bitwise_not: typing.ClassVar[AluOp]
    bitwise_or: typing.ClassVar[AluOp]
    bitwise_xor: typing.ClassVar[AluOp]
    bypass: typing.ClassVar[AluOp]
    divide: typing.ClassVar[AluOp]
    is_equal: typing.ClassVar[AluOp]
    is_ge: typing.ClassVar[AluOp]
    is_gt: typing.ClassVar[AluOp]
    is_le: typing.ClassVar[AluOp]
    is_lt: typing.ClassVar[AluOp]
    logical_and: typing.ClassVar[AluOp]
    logical_or: typing.ClassVar[AluOp]
    logical_shift_left: typing.ClassVar[AluOp]
    logical_shift_right: typing.ClassVar[AluOp]
    logical_xor: typing.ClassVar[AluOp]
    max: typing.ClassVar[AluOp]
    min: typing.ClassVar[AluOp]
    mod: typing.ClassVar[AluOp]
    mult: typing.ClassVar[AluOp]
    not_equal: typing.ClassVar[AluOp]
    pow: typing.ClassVar[AluOp]
    rsqrt: typing.ClassVar[AluOp]
    subtract: typing.ClassVar[AluOp]
    @typing.overload
    def __eq__(self, other: AluOp) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: AluOp) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class AccumCmd:
    """
    Members:
    
      Idle
    
      Zero
    
      Accumulate
    
      AddAccumulate
    
      ZeroAccumulate
    
      LoadAccumulate
    """
    Accumulate: typing.ClassVar[AccumCmd]
    AddAccumulate: typing.ClassVar[AccumCmd]
    Idle: typing.ClassVar[AccumCmd]
    LoadAccumulate: typing.ClassVar[AccumCmd]
    Zero: typing.ClassVar[AccumCmd]
    ZeroAccumulate: typing.ClassVar[AccumCmd]
    __members__: typing.ClassVar[dict[str, AccumCmd]]
    @typing.overload
    def __eq__(self, other: AccumCmd) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: AccumCmd) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class ReduceAxis:
    """
    Members:
    
      C
    
      X
    
      XY
    
      XYZ
    
      XYZW
    
      XYZWC
    """
    C: typing.ClassVar[ReduceAxis]
    X: typing.ClassVar[ReduceAxis]
    XY: typing.ClassVar[ReduceAxis]
    XYZ: typing.ClassVar[ReduceAxis]
    XYZW: typing.ClassVar[ReduceAxis]
    XYZWC: typing.ClassVar[ReduceAxis]
    __members__: typing.ClassVar[dict[str, ReduceAxis]]
    @typing.overload
    def __eq__(self, other: ReduceAxis) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ReduceAxis) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class MemsetMode:
    """
    Members:
    
      Const
    
      Random
    """
    Const: typing.ClassVar[MemsetMode]
    Random: typing.ClassVar[MemsetMode]
    __members__: typing.ClassVar[dict[str, MemsetMode]]
    @typing.overload
    def __eq__(self, other: MemsetMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: MemsetMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class MemoryType:
    """
    Members:
    
      Unallocated
    
      Input
    
      Output
    
      DRAM
    
      SB
    
      PSUM
    
      RNGSTATE
    
      REG
    """
    DRAM: typing.ClassVar[MemoryType]
    Input: typing.ClassVar[MemoryType]
    Output: typing.ClassVar[MemoryType]
    PSUM: typing.ClassVar[MemoryType]
    REG: typing.ClassVar[MemoryType]
    RNGSTATE: typing.ClassVar[MemoryType]
    SB: typing.ClassVar[MemoryType]
    Unallocated: typing.ClassVar[MemoryType]
    __members__: typing.ClassVar[dict[str, MemoryType]]
    @typing.overload
    def __eq__(self, other: MemoryType) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: MemoryType) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class TensorKind:
    """
    Members:
    
      ExternalInput
    
      Input
    
      ExternalOutput
    
      Output
    
      Const
    
      Internal
    
      Pointer
    
      InternalInterface
    """
    Const: typing.ClassVar[TensorKind]
    ExternalInput: typing.ClassVar[TensorKind]
    ExternalOutput: typing.ClassVar[TensorKind]
    Input: typing.ClassVar[TensorKind]
    Internal: typing.ClassVar[TensorKind]
    InternalInterface: typing.ClassVar[TensorKind]
    Output: typing.ClassVar[TensorKind]
    Pointer: typing.ClassVar[TensorKind]
    __members__: typing.ClassVar[dict[str, TensorKind]]
    @typing.overload
    def __eq__(self, other: TensorKind) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: TensorKind) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class AddrSpace:
    """
    Members:
    
      Local
    
      Shared
    """
    Local: typing.ClassVar[AddrSpace]
    Shared: typing.ClassVar[AddrSpace]
    __members__: typing.ClassVar[dict[str, AddrSpace]]
    @typing.overload
    def __eq__(self, other: AddrSpace) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: AddrSpace) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class AccessFlavour:
    """
    Members:
    
      Plain
    
      Seq
    
      AP
    
      Opaque
    """
    AP: typing.ClassVar[AccessFlavour]
    Opaque: typing.ClassVar[AccessFlavour]
    Plain: typing.ClassVar[AccessFlavour]
    Seq: typing.ClassVar[AccessFlavour]
    __members__: typing.ClassVar[dict[str, AccessFlavour]]
    @typing.overload
    def __eq__(self, other: AccessFlavour) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: AccessFlavour) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class PerfMode:
    """
    Members:
    
      None
    
      DoubleRow
    
      DoubleColumn
    
      DoublePixel
    """
    DoubleColumn: typing.ClassVar[PerfMode]
    DoublePixel: typing.ClassVar[PerfMode]
    DoubleRow: typing.ClassVar[PerfMode]
    # None: typing.ClassVar[PerfMode]  (a keyword: use getattr)
    __members__: typing.ClassVar[dict[str, PerfMode]]
    @typing.overload
    def __eq__(self, other: PerfMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: PerfMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class DmaMode:
    """
    Members:
    
      Copy
    
      Transpose
    
      Replicate
    
      CCE
    
      Dynamic
    """
    CCE: typing.ClassVar[DmaMode]
    Copy: typing.ClassVar[DmaMode]
    Dynamic: typing.ClassVar[DmaMode]
    Replicate: typing.ClassVar[DmaMode]
    Transpose: typing.ClassVar[DmaMode]
    __members__: typing.ClassVar[dict[str, DmaMode]]
    @typing.overload
    def __eq__(self, other: DmaMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DmaMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class DgeType:
    """
    Members:
    
      None
    
      HWDGE
    
      SWDGE
    """
    HWDGE: typing.ClassVar[DgeType]
    # None: typing.ClassVar[DgeType]  (a keyword: use getattr)
    SWDGE: typing.ClassVar[DgeType]
    __members__: typing.ClassVar[dict[str, DgeType]]
    @typing.overload
    def __eq__(self, other: DgeType) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DgeType) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class DType:
    """
    Members:
    
      float32
    
      float32r
    
      bfloat16
    
      float16
    
      float8e4
    
      float8e5
    
      float8e3
    
      int8
    
      int16
    
      int32
    
      int64
    
      uint8
    
      uint16
    
      uint32
    
      uint64
    """
    __members__: typing.ClassVar[dict[str, DType]]
    bfloat16: typing.ClassVar[DType]
    float16: typing.ClassVar[DType]
    float32: typing.ClassVar[DType]
    float32r: typing.ClassVar[DType]
    float8e3: typing.ClassVar[DType]
    float8e4: typing.ClassVar[DType]
    float8e5: typing.ClassVar[DType]
    int16: typing.ClassVar[DType]
    int32: typing.ClassVar[DType]
    int64: typing.ClassVar[DType]
    int8: typing.ClassVar[DType]
    uint16: typing.ClassVar[DType]
    uint32: typing.ClassVar[DType]
    uint64: typing.ClassVar[DType]
    uint8: typing.ClassVar[DType]
    @typing.overload
    def __eq__(self, other: DType) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DType) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class APPair:
    """
    One [step, num] dimension of an access pattern (step in elements).
    """
    __hash__: typing.ClassVar[None] = None
    def __eq__(self, arg0: APPair) -> bool:
        ...
    @typing.overload
    def __init__(self, step: typing.SupportsInt | typing.SupportsIndex, num: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The pair [step, num].
        """
    @typing.overload
    def __init__(self, pair: collections.abc.Sequence) -> None:
        """
        The pair from a [step, num] sequence.
        """
    def __repr__(self) -> str:
        ...
    @property
    def num(self) -> int:
        """
        How many elements.
        """
    @num.setter
    def num(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def step(self) -> int:
        """
        The stride, in elements.
        """
    @step.setter
    def step(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class MemoryLocationSet:
    """
    bir::MemoryLocationSet: a tensor (name, dtype, shape, kind) and its memory location.
    """
    @property
    def dtype(self) -> DType:
        """
        The tensor's element type.
        """
    @property
    def kind(self) -> TensorKind:
        """
        What the tensor is to the kernel (input, output, internal, ...).
        """
    @kind.setter
    def kind(self, arg0: TensorKind) -> None:
        ...
    @property
    def location(self) -> MemoryLocation:
        """
        The set's memory location.
        """
    @property
    def name(self) -> str:
        """
        The tensor's name.
        """
    @property
    def tensor_shape(self) -> list[int]:
        """
        The tensor's shape.
        """
class MemoryLocation:
    """
    bir::MemoryLocation: where a tensor lives (memory type, partitions, bytes, address).
    """
    def __repr__(self) -> str:
        ...
    @property
    def addr(self) -> int:
        """
        Its byte address (within each partition on chip).
        """
    @property
    def bank(self) -> int:
        """
        Its PSUM bank (PSUM locations).
        """
    @property
    def base_partition(self) -> int:
        """
        Its first partition.
        """
    @property
    def bytes_per_partition(self) -> int:
        """
        Its size in each partition, in bytes.
        """
    @property
    def dtype(self) -> DType:
        """
        The tensor's element type.
        """
    @property
    def kind(self) -> TensorKind:
        """
        The tensor's kind.
        """
    @property
    def name(self) -> str:
        """
        The location's name.
        """
    @property
    def partitions(self) -> int:
        """
        How many partitions it spans.
        """
    @property
    def set_name(self) -> str:
        """
        The tensor's name.
        """
    @property
    def shape(self) -> list[int]:
        """
        The tensor's shape.
        """
    @property
    def type(self) -> MemoryType:
        """
        The memory it is in (DRAM, SB, PSUM, ...).
        """
class AccessPattern:
    """
    bir::AccessPattern: an instruction operand, a strided view of a memory location or an immediate.
    """
    @staticmethod
    def immediate(value: typing.SupportsFloat | typing.SupportsIndex, dtype: DType = DType.float32) -> AccessPattern:
        """
        An immediate operand of `value`.
        """
    def __init__(self, location: MemoryLocation, offset: typing.SupportsInt | typing.SupportsIndex, pattern: collections.abc.Sequence[APPair], dtype: DType | None = None) -> None:
        """
        A plain (ISA) operand: `pattern` over `location` from element `offset`, in `dtype` (default: the tensor's).
        """
    def __repr__(self) -> str:
        ...
    @property
    def access_shape(self) -> list[int]:
        """
        The shape a kernel-node operand is accessed as.
        """
    @access_shape.setter
    def access_shape(self, arg1: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def dtype(self) -> DType:
        """
        The element type it is read or written in.
        """
    @dtype.setter
    def dtype(self, arg0: DType) -> None:
        ...
    @property
    def flavour(self) -> AccessFlavour:
        """
        How the operand addresses its tensor (BIR JSON "flavour").
        """
    @flavour.setter
    def flavour(self, arg0: AccessFlavour) -> None:
        ...
    @property
    def free_shape(self) -> list[int]:
        """
        The shape of its free (non-partition) dimensions.
        """
    @property
    def imm(self) -> float:
        """
        The value of an immediate operand.
        """
    @imm.setter
    def imm(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def is_immediate(self) -> bool:
        """
        Whether it is an immediate.
        """
    @property
    def lnc_size(self) -> int:
        """
        The logical NeuronCore size a kernel-node operand is split over.
        """
    @lnc_size.setter
    def lnc_size(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def location(self) -> MemoryLocation:
        """
        The memory location it views (None for an immediate).
        """
    @property
    def memref(self) -> str:
        """
        The memory location's name ("" for an immediate).
        """
    @property
    def num_elements(self) -> int:
        """
        How many elements it addresses.
        """
    @property
    def offset(self) -> int:
        """
        Its first element's offset, in elements.
        """
    @offset.setter
    def offset(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def partition_dim(self) -> int:
        """
        Which dimension of access_shape is the partition dimension.
        """
    @partition_dim.setter
    def partition_dim(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def partitions(self) -> int:
        """
        How many partitions it spans.
        """
    @property
    def pattern(self) -> list[APPair]:
        """
        Its [step, num] dimensions, partition dimension first.
        """
    @pattern.setter
    def pattern(self, arg0: collections.abc.Sequence[APPair]) -> None:
        ...
    @property
    def reduce(self) -> bool:
        """
        Whether an output operand accumulates into its destination.
        """
    @reduce.setter
    def reduce(self, arg0: bool) -> None:
        ...
class Instruction:
    """
    bir::Instruction: the base of every BIR node class (opcode, engine, operands).
    """
    @staticmethod
    def createAP(tensor: MemoryLocation, offset: typing.SupportsInt | typing.SupportsIndex, pattern: collections.abc.Sequence[APPair], access_shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], partition_dim: typing.SupportsInt | typing.SupportsIndex, lnc_size: typing.SupportsInt | typing.SupportsIndex = 1) -> AccessPattern:
        """
        A kernel-node operand: `pattern` over `tensor` from `offset`, accessed as `access_shape`.
        """
    def __repr__(self) -> str:
        ...
    def addAP(self, ap: AccessPattern, isOutput: bool) -> None:
        """
        Adds `ap` as an input or an output operand.
        """
    def addArgumentOrOutput(self, ap: AccessPattern, isOutput: bool, reduce: bool = False) -> None:
        """
        Adds a kernel-node argument (input) or output operand; `reduce`: the output accumulates.
        """
    def addOpaqueAP(self, tensor: MemoryLocation, isOutput: bool) -> None:
        """
        Adds an opaque operand naming `tensor` (no pattern).
        """
    def addSeqAccess(self, tensor: MemoryLocation, isOutput: bool) -> None:
        """
        Adds a kernel-node operand reading or writing all of `tensor` in order.
        """
    @property
    def engine(self) -> Engine:
        """
        The engine it runs on.
        """
    @engine.setter
    def engine(self, arg0: Engine) -> None:
        ...
    @property
    def extra_json(self) -> str:
        """
        Unknown BIR JSON fields it was read with, kept verbatim ("{...}" or "").
        """
    @extra_json.setter
    def extra_json(self, arg0: str) -> None:
        ...
    @property
    def id(self) -> int:
        """
        Its position-independent id, unique within its module.
        """
    @property
    def ins(self) -> list[AccessPattern]:
        """
        Its input operands.
        """
    @ins.setter
    def ins(self, arg1: collections.abc.Sequence[AccessPattern]) -> None:
        ...
    @property
    def kernel(self) -> str:
        """
        The kernel instance it was expanded from, or "".
        """
    @kernel.setter
    def kernel(self, arg0: str) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Its name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def node_class(self) -> str:
        """
        The name of its node class ("InstMatmult", ...).
        """
    @property
    def opcode(self) -> int:
        """
        Its InstructionType ordinal.
        """
    @property
    def opcode_name(self) -> str:
        """
        Its InstructionType name.
        """
    @property
    def outs(self) -> list[AccessPattern]:
        """
        Its output operands.
        """
    @outs.setter
    def outs(self, arg1: collections.abc.Sequence[AccessPattern]) -> None:
        ...
    @property
    def source(self) -> str:
        """
        Where it came from (file:line of the traced kernel), or "".
        """
    @source.setter
    def source(self, arg0: str) -> None:
        ...
class InstActivation(Instruction):
    """
    bir::InstActivation: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('func', 'scale', 'alpha', 'acc', 'acc_op', 'has_bias', 'has_scale_tensor')
    operand_rule: typing.ClassVar[tuple] = (1, 3, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_acc(self: Instruction, arg0: AccumCmd) -> None:
        """
        Sets InstActivation.acc.
        """
    def set_acc_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstActivation.acc_op.
        """
    def set_alpha(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstActivation.alpha.
        """
    def set_func(self: Instruction, arg0: ActivationFunc) -> None:
        """
        Sets InstActivation.func.
        """
    def set_has_bias(self: Instruction, arg0: bool) -> None:
        """
        Sets InstActivation.has_bias.
        """
    def set_has_scale_tensor(self: Instruction, arg0: bool) -> None:
        """
        Sets InstActivation.has_scale_tensor.
        """
    def set_scale(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstActivation.scale.
        """
    @property
    def acc(self) -> AccumCmd:
        """
        InstActivation.acc: the node's "acc" field (BIR JSON).
        """
    @acc.setter
    def acc(self, arg0: AccumCmd) -> None:
        ...
    @property
    def acc_op(self) -> AluOp:
        """
        InstActivation.acc_op: the node's "acc_op" field (BIR JSON).
        """
    @acc_op.setter
    def acc_op(self, arg0: AluOp) -> None:
        ...
    @property
    def alpha(self) -> float:
        """
        InstActivation.alpha: the node's "alpha" field (BIR JSON).
        """
    @alpha.setter
    def alpha(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def func(self) -> ActivationFunc:
        """
        InstActivation.func: the node's "func" field (BIR JSON).
        """
    @func.setter
    def func(self, arg0: ActivationFunc) -> None:
        ...
    @property
    def has_bias(self) -> bool:
        """
        InstActivation.has_bias: the node's "has_bias" field (BIR JSON).
        """
    @has_bias.setter
    def has_bias(self, arg0: bool) -> None:
        ...
    @property
    def has_scale_tensor(self) -> bool:
        """
        InstActivation.has_scale_tensor: the node's "has_scale_tensor" field (BIR JSON).
        """
    @has_scale_tensor.setter
    def has_scale_tensor(self, arg0: bool) -> None:
        ...
    @property
    def scale(self) -> float:
        """
        InstActivation.scale: the node's "scale" field (BIR JSON).
        """
    @scale.setter
    def scale(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class InstReadActivationAccumulator(Instruction):
    """
    bir::InstReadActivationAccumulator: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (0, 0, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstMemset(Instruction):
    """
    bir::InstMemset: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('mode', 'constant')
    operand_rule: typing.ClassVar[tuple] = (0, 0, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_constant(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstMemset.constant.
        """
    def set_mode(self: Instruction, arg0: MemsetMode) -> None:
        """
        Sets InstMemset.mode.
        """
    @property
    def constant(self) -> float:
        """
        InstMemset.constant: the node's "constant" field (BIR JSON).
        """
    @constant.setter
    def constant(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mode(self) -> MemsetMode:
        """
        InstMemset.mode: the node's "mode" field (BIR JSON).
        """
    @mode.setter
    def mode(self, arg0: MemsetMode) -> None:
        ...
class InstNoOp(Instruction):
    """
    bir::InstNoOp: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (0, 8, 0, 8)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstReciprocal(Instruction):
    """
    bir::InstReciprocal: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstTensorCopy(Instruction):
    """
    bir::InstTensorCopy: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstTensorCopyDynamic(Instruction):
    """
    bir::InstTensorCopyDynamic: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('dynamic_step')
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_dynamic_step(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstTensorCopyDynamic.dynamic_step.
        """
    @property
    def dynamic_step(self) -> int:
        """
        InstTensorCopyDynamic.dynamic_step: the node's "dynamic_step" field (BIR JSON).
        """
    @dynamic_step.setter
    def dynamic_step(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class InstTensorReduce(Instruction):
    """
    bir::InstTensorReduce: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op', 'axis', 'negate')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_axis(self: Instruction, arg0: ReduceAxis) -> None:
        """
        Sets InstTensorReduce.axis.
        """
    def set_negate(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorReduce.negate.
        """
    def set_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorReduce.op.
        """
    @property
    def axis(self) -> ReduceAxis:
        """
        InstTensorReduce.axis: the node's "axis" field (BIR JSON).
        """
    @axis.setter
    def axis(self, arg0: ReduceAxis) -> None:
        ...
    @property
    def negate(self) -> bool:
        """
        InstTensorReduce.negate: the node's "negate" field (BIR JSON).
        """
    @negate.setter
    def negate(self, arg0: bool) -> None:
        ...
    @property
    def op(self) -> AluOp:
        """
        InstTensorReduce.op: the node's "op" field (BIR JSON).
        """
    @op.setter
    def op(self, arg0: AluOp) -> None:
        ...
class InstTensorScalar(Instruction):
    """
    bir::InstTensorScalar: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op0', 'const0', 'reverse0', 'op1', 'const1', 'reverse1')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_const0(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorScalar.const0.
        """
    def set_const1(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorScalar.const1.
        """
    def set_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalar.op0.
        """
    def set_op1(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalar.op1.
        """
    def set_reverse0(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalar.reverse0.
        """
    def set_reverse1(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalar.reverse1.
        """
    @property
    def const0(self) -> float:
        """
        InstTensorScalar.const0: the node's "const0" field (BIR JSON).
        """
    @const0.setter
    def const0(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def const1(self) -> float:
        """
        InstTensorScalar.const1: the node's "const1" field (BIR JSON).
        """
    @const1.setter
    def const1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def op0(self) -> AluOp:
        """
        InstTensorScalar.op0: the node's "op0" field (BIR JSON).
        """
    @op0.setter
    def op0(self, arg0: AluOp) -> None:
        ...
    @property
    def op1(self) -> AluOp:
        """
        InstTensorScalar.op1: the node's "op1" field (BIR JSON).
        """
    @op1.setter
    def op1(self, arg0: AluOp) -> None:
        ...
    @property
    def reverse0(self) -> bool:
        """
        InstTensorScalar.reverse0: the node's "reverse0" field (BIR JSON).
        """
    @reverse0.setter
    def reverse0(self, arg0: bool) -> None:
        ...
    @property
    def reverse1(self) -> bool:
        """
        InstTensorScalar.reverse1: the node's "reverse1" field (BIR JSON).
        """
    @reverse1.setter
    def reverse1(self, arg0: bool) -> None:
        ...
class InstTensorScalarPtr(Instruction):
    """
    bir::InstTensorScalarPtr: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op0', 'reverse0', 'op1', 'reverse1', 'const1')
    operand_rule: typing.ClassVar[tuple] = (2, 3, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_const1(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorScalarPtr.const1.
        """
    def set_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalarPtr.op0.
        """
    def set_op1(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalarPtr.op1.
        """
    def set_reverse0(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarPtr.reverse0.
        """
    def set_reverse1(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarPtr.reverse1.
        """
    @property
    def const1(self) -> float:
        """
        InstTensorScalarPtr.const1: the node's "const1" field (BIR JSON).
        """
    @const1.setter
    def const1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def op0(self) -> AluOp:
        """
        InstTensorScalarPtr.op0: the node's "op0" field (BIR JSON).
        """
    @op0.setter
    def op0(self, arg0: AluOp) -> None:
        ...
    @property
    def op1(self) -> AluOp:
        """
        InstTensorScalarPtr.op1: the node's "op1" field (BIR JSON).
        """
    @op1.setter
    def op1(self, arg0: AluOp) -> None:
        ...
    @property
    def reverse0(self) -> bool:
        """
        InstTensorScalarPtr.reverse0: the node's "reverse0" field (BIR JSON).
        """
    @reverse0.setter
    def reverse0(self, arg0: bool) -> None:
        ...
    @property
    def reverse1(self) -> bool:
        """
        InstTensorScalarPtr.reverse1: the node's "reverse1" field (BIR JSON).
        """
    @reverse1.setter
    def reverse1(self, arg0: bool) -> None:
        ...
class InstTensorTensor(Instruction):
    """
    bir::InstTensorTensor: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op')
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorTensor.op.
        """
    @property
    def op(self) -> AluOp:
        """
        InstTensorTensor.op: the node's "op" field (BIR JSON).
        """
    @op.setter
    def op(self, arg0: AluOp) -> None:
        ...
class InstTensorTensorScan(Instruction):
    """
    bir::InstTensorTensorScan: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op0', 'op1', 'initial')
    operand_rule: typing.ClassVar[tuple] = (2, 3, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_initial(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorTensorScan.initial.
        """
    def set_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorTensorScan.op0.
        """
    def set_op1(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorTensorScan.op1.
        """
    @property
    def initial(self) -> float:
        """
        InstTensorTensorScan.initial: the node's "initial" field (BIR JSON).
        """
    @initial.setter
    def initial(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def op0(self) -> AluOp:
        """
        InstTensorTensorScan.op0: the node's "op0" field (BIR JSON).
        """
    @op0.setter
    def op0(self, arg0: AluOp) -> None:
        ...
    @property
    def op1(self) -> AluOp:
        """
        InstTensorTensorScan.op1: the node's "op1" field (BIR JSON).
        """
    @op1.setter
    def op1(self, arg0: AluOp) -> None:
        ...
class InstScalarTensorTensor(Instruction):
    """
    bir::InstScalarTensorTensor: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op0', 'const0', 'reverse0', 'op1', 'reverse1')
    operand_rule: typing.ClassVar[tuple] = (2, 3, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_const0(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstScalarTensorTensor.const0.
        """
    def set_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstScalarTensorTensor.op0.
        """
    def set_op1(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstScalarTensorTensor.op1.
        """
    def set_reverse0(self: Instruction, arg0: bool) -> None:
        """
        Sets InstScalarTensorTensor.reverse0.
        """
    def set_reverse1(self: Instruction, arg0: bool) -> None:
        """
        Sets InstScalarTensorTensor.reverse1.
        """
    @property
    def const0(self) -> float:
        """
        InstScalarTensorTensor.const0: the node's "const0" field (BIR JSON).
        """
    @const0.setter
    def const0(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def op0(self) -> AluOp:
        """
        InstScalarTensorTensor.op0: the node's "op0" field (BIR JSON).
        """
    @op0.setter
    def op0(self, arg0: AluOp) -> None:
        ...
    @property
    def op1(self) -> AluOp:
        """
        InstScalarTensorTensor.op1: the node's "op1" field (BIR JSON).
        """
    @op1.setter
    def op1(self, arg0: AluOp) -> None:
        ...
    @property
    def reverse0(self) -> bool:
        """
        InstScalarTensorTensor.reverse0: the node's "reverse0" field (BIR JSON).
        """
    @reverse0.setter
    def reverse0(self, arg0: bool) -> None:
        ...
    @property
    def reverse1(self) -> bool:
        """
        InstScalarTensorTensor.reverse1: the node's "reverse1" field (BIR JSON).
        """
    @reverse1.setter
    def reverse1(self, arg0: bool) -> None:
        ...
class InstTensorScalarReduce(Instruction):
    """
    bir::InstTensorScalarReduce: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op0', 'const0', 'reverse0', 'reduce_op', 'acc', 'initial', 'negate', 'cumulative', 'has_scalar_tensor', 'has_initial_tensor')
    operand_rule: typing.ClassVar[tuple] = (1, 3, 1, 2)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_acc(self: Instruction, arg0: AccumCmd) -> None:
        """
        Sets InstTensorScalarReduce.acc.
        """
    def set_const0(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorScalarReduce.const0.
        """
    def set_cumulative(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarReduce.cumulative.
        """
    def set_has_initial_tensor(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarReduce.has_initial_tensor.
        """
    def set_has_scalar_tensor(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarReduce.has_scalar_tensor.
        """
    def set_initial(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstTensorScalarReduce.initial.
        """
    def set_negate(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarReduce.negate.
        """
    def set_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalarReduce.op0.
        """
    def set_reduce_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorScalarReduce.reduce_op.
        """
    def set_reverse0(self: Instruction, arg0: bool) -> None:
        """
        Sets InstTensorScalarReduce.reverse0.
        """
    @property
    def acc(self) -> AccumCmd:
        """
        InstTensorScalarReduce.acc: the node's "acc" field (BIR JSON).
        """
    @acc.setter
    def acc(self, arg0: AccumCmd) -> None:
        ...
    @property
    def const0(self) -> float:
        """
        InstTensorScalarReduce.const0: the node's "const0" field (BIR JSON).
        """
    @const0.setter
    def const0(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cumulative(self) -> bool:
        """
        InstTensorScalarReduce.cumulative: the node's "cumulative" field (BIR JSON).
        """
    @cumulative.setter
    def cumulative(self, arg0: bool) -> None:
        ...
    @property
    def has_initial_tensor(self) -> bool:
        """
        InstTensorScalarReduce.has_initial_tensor: the node's "has_initial_tensor" field (BIR JSON).
        """
    @has_initial_tensor.setter
    def has_initial_tensor(self, arg0: bool) -> None:
        ...
    @property
    def has_scalar_tensor(self) -> bool:
        """
        InstTensorScalarReduce.has_scalar_tensor: the node's "has_scalar_tensor" field (BIR JSON).
        """
    @has_scalar_tensor.setter
    def has_scalar_tensor(self, arg0: bool) -> None:
        ...
    @property
    def initial(self) -> float:
        """
        InstTensorScalarReduce.initial: the node's "initial" field (BIR JSON).
        """
    @initial.setter
    def initial(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def negate(self) -> bool:
        """
        InstTensorScalarReduce.negate: the node's "negate" field (BIR JSON).
        """
    @negate.setter
    def negate(self, arg0: bool) -> None:
        ...
    @property
    def op0(self) -> AluOp:
        """
        InstTensorScalarReduce.op0: the node's "op0" field (BIR JSON).
        """
    @op0.setter
    def op0(self, arg0: AluOp) -> None:
        ...
    @property
    def reduce_op(self) -> AluOp:
        """
        InstTensorScalarReduce.reduce_op: the node's "reduce_op" field (BIR JSON).
        """
    @reduce_op.setter
    def reduce_op(self, arg0: AluOp) -> None:
        ...
    @property
    def reverse0(self) -> bool:
        """
        InstTensorScalarReduce.reverse0: the node's "reverse0" field (BIR JSON).
        """
    @reverse0.setter
    def reverse0(self, arg0: bool) -> None:
        ...
class InstBNStats(Instruction):
    """
    bir::InstBNStats: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstBNStatsAggregate(Instruction):
    """
    bir::InstBNStatsAggregate: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstStreamShuffle(Instruction):
    """
    bir::InstStreamShuffle: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('shuffle_mask')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_shuffle_mask(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstStreamShuffle.shuffle_mask.
        """
    @property
    def shuffle_mask(self) -> list[int]:
        """
        InstStreamShuffle.shuffle_mask: the node's "shuffle_mask" field (BIR JSON).
        """
    @shuffle_mask.setter
    def shuffle_mask(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class InstStreamTranspose(Instruction):
    """
    bir::InstStreamTranspose: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstIota(Instruction):
    """
    bir::InstIota: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('base', 'pattern', 'channel_multiplier')
    operand_rule: typing.ClassVar[tuple] = (0, 0, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_base(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstIota.base.
        """
    def set_channel_multiplier(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstIota.channel_multiplier.
        """
    def set_pattern(self: Instruction, arg0: collections.abc.Sequence[APPair]) -> None:
        """
        Sets InstIota.pattern.
        """
    @property
    def base(self) -> int:
        """
        InstIota.base: the node's "base" field (BIR JSON).
        """
    @base.setter
    def base(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def channel_multiplier(self) -> int:
        """
        InstIota.channel_multiplier: the node's "channel_multiplier" field (BIR JSON).
        """
    @channel_multiplier.setter
    def channel_multiplier(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def pattern(self) -> list[APPair]:
        """
        InstIota.pattern: the node's "pattern" field (BIR JSON).
        """
    @pattern.setter
    def pattern(self, arg0: collections.abc.Sequence[APPair]) -> None:
        ...
class InstAffineSelect(Instruction):
    """
    bir::InstAffineSelect: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('base', 'pattern', 'channel_multiplier', 'compare_op', 'fill_value')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_base(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstAffineSelect.base.
        """
    def set_channel_multiplier(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstAffineSelect.channel_multiplier.
        """
    def set_compare_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstAffineSelect.compare_op.
        """
    def set_fill_value(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstAffineSelect.fill_value.
        """
    def set_pattern(self: Instruction, arg0: collections.abc.Sequence[APPair]) -> None:
        """
        Sets InstAffineSelect.pattern.
        """
    @property
    def base(self) -> int:
        """
        InstAffineSelect.base: the node's "base" field (BIR JSON).
        """
    @base.setter
    def base(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def channel_multiplier(self) -> int:
        """
        InstAffineSelect.channel_multiplier: the node's "channel_multiplier" field (BIR JSON).
        """
    @channel_multiplier.setter
    def channel_multiplier(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def compare_op(self) -> AluOp:
        """
        InstAffineSelect.compare_op: the node's "compare_op" field (BIR JSON).
        """
    @compare_op.setter
    def compare_op(self, arg0: AluOp) -> None:
        ...
    @property
    def fill_value(self) -> float:
        """
        InstAffineSelect.fill_value: the node's "fill_value" field (BIR JSON).
        """
    @fill_value.setter
    def fill_value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def pattern(self) -> list[APPair]:
        """
        InstAffineSelect.pattern: the node's "pattern" field (BIR JSON).
        """
    @pattern.setter
    def pattern(self, arg0: collections.abc.Sequence[APPair]) -> None:
        ...
class InstRangeSelect(Instruction):
    """
    bir::InstRangeSelect: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('comp_op0', 'comp_op1', 'range_start', 'fill_value')
    operand_rule: typing.ClassVar[tuple] = (3, 3, 1, 2)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_comp_op0(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstRangeSelect.comp_op0.
        """
    def set_comp_op1(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstRangeSelect.comp_op1.
        """
    def set_fill_value(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstRangeSelect.fill_value.
        """
    def set_range_start(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstRangeSelect.range_start.
        """
    @property
    def comp_op0(self) -> AluOp:
        """
        InstRangeSelect.comp_op0: the node's "comp_op0" field (BIR JSON).
        """
    @comp_op0.setter
    def comp_op0(self, arg0: AluOp) -> None:
        ...
    @property
    def comp_op1(self) -> AluOp:
        """
        InstRangeSelect.comp_op1: the node's "comp_op1" field (BIR JSON).
        """
    @comp_op1.setter
    def comp_op1(self, arg0: AluOp) -> None:
        ...
    @property
    def fill_value(self) -> float:
        """
        InstRangeSelect.fill_value: the node's "fill_value" field (BIR JSON).
        """
    @fill_value.setter
    def fill_value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def range_start(self) -> int:
        """
        InstRangeSelect.range_start: the node's "range_start" field (BIR JSON).
        """
    @range_start.setter
    def range_start(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class InstSelect(Instruction):
    """
    bir::InstSelect: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (3, 3, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstSelectReduce(Instruction):
    """
    bir::InstSelectReduce: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('on_false_value', 'reduce_op')
    operand_rule: typing.ClassVar[tuple] = (2, 3, 1, 2)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_on_false_value(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstSelectReduce.on_false_value.
        """
    def set_reduce_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstSelectReduce.reduce_op.
        """
    @property
    def on_false_value(self) -> float:
        """
        InstSelectReduce.on_false_value: the node's "on_false_value" field (BIR JSON).
        """
    @on_false_value.setter
    def on_false_value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def reduce_op(self) -> AluOp:
        """
        InstSelectReduce.reduce_op: the node's "reduce_op" field (BIR JSON).
        """
    @reduce_op.setter
    def reduce_op(self, arg0: AluOp) -> None:
        ...
class InstCopyPredicated(Instruction):
    """
    bir::InstCopyPredicated: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstDropout(Instruction):
    """
    bir::InstDropout: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('prob')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_prob(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstDropout.prob.
        """
    @property
    def prob(self) -> float:
        """
        InstDropout.prob: the node's "prob" field (BIR JSON).
        """
    @prob.setter
    def prob(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class InstRand(Instruction):
    """
    bir::InstRand: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (0, 0, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstSetRandState(Instruction):
    """
    bir::InstSetRandState: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 0, 0)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstGetRandState(Instruction):
    """
    bir::InstGetRandState: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (0, 0, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstMax(Instruction):
    """
    bir::InstMax: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstMaxIndex(Instruction):
    """
    bir::InstMaxIndex: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstMatchReplace(Instruction):
    """
    bir::InstMatchReplace: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('imm_value')
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 2)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_imm_value(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Sets InstMatchReplace.imm_value.
        """
    @property
    def imm_value(self) -> float:
        """
        InstMatchReplace.imm_value: the node's "imm_value" field (BIR JSON).
        """
    @imm_value.setter
    def imm_value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class InstTensorPartitionReduce(Instruction):
    """
    bir::InstTensorPartitionReduce: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('op')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstTensorPartitionReduce.op.
        """
    @property
    def op(self) -> AluOp:
        """
        InstTensorPartitionReduce.op: the node's "op" field (BIR JSON).
        """
    @op.setter
    def op(self, arg0: AluOp) -> None:
        ...
class InstLocalGather(Instruction):
    """
    bir::InstLocalGather: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('num_elem_per_idx', 'num_valid_indices')
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_num_elem_per_idx(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstLocalGather.num_elem_per_idx.
        """
    def set_num_valid_indices(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstLocalGather.num_valid_indices.
        """
    @property
    def num_elem_per_idx(self) -> int:
        """
        InstLocalGather.num_elem_per_idx: the node's "num_elem_per_idx" field (BIR JSON).
        """
    @num_elem_per_idx.setter
    def num_elem_per_idx(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def num_valid_indices(self) -> int:
        """
        InstLocalGather.num_valid_indices: the node's "num_valid_indices" field (BIR JSON).
        """
    @num_valid_indices.setter
    def num_valid_indices(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class InstGather(Instruction):
    """
    bir::InstGather: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstSequenceBounds(Instruction):
    """
    bir::InstSequenceBounds: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class InstNonzeroWithCount(Instruction):
    """
    bir::InstNonzeroWithCount: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('index_offset', 'padding_val')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_index_offset(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstNonzeroWithCount.index_offset.
        """
    def set_padding_val(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstNonzeroWithCount.padding_val.
        """
    @property
    def index_offset(self) -> int:
        """
        InstNonzeroWithCount.index_offset: the node's "index_offset" field (BIR JSON).
        """
    @index_offset.setter
    def index_offset(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def padding_val(self) -> int:
        """
        InstNonzeroWithCount.padding_val: the node's "padding_val" field (BIR JSON).
        """
    @padding_val.setter
    def padding_val(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class InstMatmult(Instruction):
    """
    bir::InstMatmult: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('start_tensor_calc', 'stop_tensor_calc', 'is_transpose', 'tile_position', 'tile_size', 'perf_mode')
    operand_rule: typing.ClassVar[tuple] = (2, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_is_transpose(self: Instruction, arg0: bool) -> None:
        """
        Sets InstMatmult.is_transpose.
        """
    def set_perf_mode(self: Instruction, arg0: PerfMode) -> None:
        """
        Sets InstMatmult.perf_mode.
        """
    def set_start_tensor_calc(self: Instruction, arg0: bool) -> None:
        """
        Sets InstMatmult.start_tensor_calc.
        """
    def set_stop_tensor_calc(self: Instruction, arg0: bool) -> None:
        """
        Sets InstMatmult.stop_tensor_calc.
        """
    def set_tile_position(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstMatmult.tile_position.
        """
    def set_tile_size(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstMatmult.tile_size.
        """
    @property
    def is_transpose(self) -> bool:
        """
        InstMatmult.is_transpose: the node's "is_transpose" field (BIR JSON).
        """
    @is_transpose.setter
    def is_transpose(self, arg0: bool) -> None:
        ...
    @property
    def perf_mode(self) -> PerfMode:
        """
        InstMatmult.perf_mode: the node's "perf_mode" field (BIR JSON).
        """
    @perf_mode.setter
    def perf_mode(self, arg0: PerfMode) -> None:
        ...
    @property
    def start_tensor_calc(self) -> bool:
        """
        InstMatmult.start_tensor_calc: the node's "start_tensor_calc" field (BIR JSON).
        """
    @start_tensor_calc.setter
    def start_tensor_calc(self, arg0: bool) -> None:
        ...
    @property
    def stop_tensor_calc(self) -> bool:
        """
        InstMatmult.stop_tensor_calc: the node's "stop_tensor_calc" field (BIR JSON).
        """
    @stop_tensor_calc.setter
    def stop_tensor_calc(self, arg0: bool) -> None:
        ...
    @property
    def tile_position(self) -> list[int]:
        """
        InstMatmult.tile_position: the node's "tile_position" field (BIR JSON).
        """
    @tile_position.setter
    def tile_position(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def tile_size(self) -> list[int]:
        """
        InstMatmult.tile_size: the node's "tile_size" field (BIR JSON).
        """
    @tile_size.setter
    def tile_size(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class InstDMA(Instruction):
    """
    bir::InstDMA: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('queue', 'dge_type', 'mode', 'dst_rmw_op', 'oob_is_err', 'indirect_dim')
    operand_rule: typing.ClassVar[tuple] = (1, 2, 1, 1)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_dge_type(self: Instruction, arg0: DgeType) -> None:
        """
        Sets InstDMA.dge_type.
        """
    def set_dst_rmw_op(self: Instruction, arg0: AluOp) -> None:
        """
        Sets InstDMA.dst_rmw_op.
        """
    def set_indirect_dim(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstDMA.indirect_dim.
        """
    def set_mode(self: Instruction, arg0: DmaMode) -> None:
        """
        Sets InstDMA.mode.
        """
    def set_oob_is_err(self: Instruction, arg0: bool) -> None:
        """
        Sets InstDMA.oob_is_err.
        """
    def set_queue(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstDMA.queue.
        """
    @property
    def dge_type(self) -> DgeType:
        """
        InstDMA.dge_type: the node's "dge_type" field (BIR JSON).
        """
    @dge_type.setter
    def dge_type(self, arg0: DgeType) -> None:
        ...
    @property
    def dst_rmw_op(self) -> AluOp:
        """
        InstDMA.dst_rmw_op: the node's "dst_rmw_op" field (BIR JSON).
        """
    @dst_rmw_op.setter
    def dst_rmw_op(self, arg0: AluOp) -> None:
        ...
    @property
    def indirect_dim(self) -> int:
        """
        InstDMA.indirect_dim: the node's "indirect_dim" field (BIR JSON).
        """
    @indirect_dim.setter
    def indirect_dim(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def mode(self) -> DmaMode:
        """
        InstDMA.mode: the node's "mode" field (BIR JSON).
        """
    @mode.setter
    def mode(self, arg0: DmaMode) -> None:
        ...
    @property
    def oob_is_err(self) -> bool:
        """
        InstDMA.oob_is_err: the node's "oob_is_err" field (BIR JSON).
        """
    @oob_is_err.setter
    def oob_is_err(self, arg0: bool) -> None:
        ...
    @property
    def queue(self) -> int:
        """
        InstDMA.queue: the node's "queue" field (BIR JSON).
        """
    @queue.setter
    def queue(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class InstDevicePrint(Instruction):
    """
    bir::InstDevicePrint: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('prefix')
    operand_rule: typing.ClassVar[tuple] = (1, 1, 0, 0)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_prefix(self: Instruction, arg0: str) -> None:
        """
        Sets InstDevicePrint.prefix.
        """
    @property
    def prefix(self) -> str:
        """
        InstDevicePrint.prefix: the node's "prefix" field (BIR JSON).
        """
    @prefix.setter
    def prefix(self, arg0: str) -> None:
        ...
class InstBIRKernel(Instruction):
    """
    bir::InstBIRKernel: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('kernel_name', 'kernel_attrs', 'srcs_shape', 'dsts_shape', 'sb_buf_shape', 'psum_buf_shape', 'auto_cast', 'auto_cast_type', 'is_causal', 'fused_rmsnorm', 'norm_type', 'store_add', 'quant_kernel', 'lower_bound', 'skip_gate', 'act_fn', 'up_bias', 'down_bias', 'is_tkg', 'lnc_size', 'output_layout')
    operand_rule: typing.ClassVar[tuple] = (0, 64, 0, 64)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_act_fn(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        """
        Sets InstBIRKernel.act_fn.
        """
    def set_auto_cast(self: Instruction, arg0: str) -> None:
        """
        Sets InstBIRKernel.auto_cast.
        """
    def set_auto_cast_type(self: Instruction, arg0: str) -> None:
        """
        Sets InstBIRKernel.auto_cast_type.
        """
    def set_down_bias(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.down_bias.
        """
    def set_dsts_shape(self: Instruction, arg0: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        """
        Sets InstBIRKernel.dsts_shape.
        """
    def set_fused_rmsnorm(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.fused_rmsnorm.
        """
    def set_is_causal(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.is_causal.
        """
    def set_is_tkg(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.is_tkg.
        """
    def set_kernel_attrs(self: Instruction, arg0: collections.abc.Sequence[tuple[str, str]]) -> None:
        """
        Sets InstBIRKernel.kernel_attrs.
        """
    def set_kernel_name(self: Instruction, arg0: str) -> None:
        """
        Sets InstBIRKernel.kernel_name.
        """
    def set_lnc_size(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        """
        Sets InstBIRKernel.lnc_size.
        """
    def set_lower_bound(self: Instruction, arg0: typing.SupportsFloat | typing.SupportsIndex | None) -> None:
        """
        Sets InstBIRKernel.lower_bound.
        """
    def set_norm_type(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        """
        Sets InstBIRKernel.norm_type.
        """
    def set_output_layout(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        """
        Sets InstBIRKernel.output_layout.
        """
    def set_psum_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstBIRKernel.psum_buf_shape.
        """
    def set_quant_kernel(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.quant_kernel.
        """
    def set_sb_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstBIRKernel.sb_buf_shape.
        """
    def set_skip_gate(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.skip_gate.
        """
    def set_srcs_shape(self: Instruction, arg0: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        """
        Sets InstBIRKernel.srcs_shape.
        """
    def set_store_add(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.store_add.
        """
    def set_up_bias(self: Instruction, arg0: bool | None) -> None:
        """
        Sets InstBIRKernel.up_bias.
        """
    @property
    def act_fn(self) -> int | None:
        """
        InstBIRKernel.act_fn: the node's "act_fn" field (BIR JSON).
        """
    @act_fn.setter
    def act_fn(self, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def auto_cast(self) -> str:
        """
        InstBIRKernel.auto_cast: the node's "auto_cast" field (BIR JSON).
        """
    @auto_cast.setter
    def auto_cast(self, arg0: str) -> None:
        ...
    @property
    def auto_cast_type(self) -> str:
        """
        InstBIRKernel.auto_cast_type: the node's "auto_cast_type" field (BIR JSON).
        """
    @auto_cast_type.setter
    def auto_cast_type(self, arg0: str) -> None:
        ...
    @property
    def down_bias(self) -> bool | None:
        """
        InstBIRKernel.down_bias: the node's "down_bias" field (BIR JSON).
        """
    @down_bias.setter
    def down_bias(self, arg0: bool | None) -> None:
        ...
    @property
    def dsts_shape(self) -> list[list[int]]:
        """
        InstBIRKernel.dsts_shape: the node's "dsts_shape" field (BIR JSON).
        """
    @dsts_shape.setter
    def dsts_shape(self, arg0: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        ...
    @property
    def fused_rmsnorm(self) -> bool | None:
        """
        InstBIRKernel.fused_rmsnorm: the node's "fused_rmsnorm" field (BIR JSON).
        """
    @fused_rmsnorm.setter
    def fused_rmsnorm(self, arg0: bool | None) -> None:
        ...
    @property
    def is_causal(self) -> bool | None:
        """
        InstBIRKernel.is_causal: the node's "is_causal" field (BIR JSON).
        """
    @is_causal.setter
    def is_causal(self, arg0: bool | None) -> None:
        ...
    @property
    def is_tkg(self) -> bool | None:
        """
        InstBIRKernel.is_tkg: the node's "is_tkg" field (BIR JSON).
        """
    @is_tkg.setter
    def is_tkg(self, arg0: bool | None) -> None:
        ...
    @property
    def kernel_attrs(self) -> list[tuple[str, str]]:
        """
        InstBIRKernel.kernel_attrs: the node's "kernel_attrs" field (BIR JSON).
        """
    @kernel_attrs.setter
    def kernel_attrs(self, arg0: collections.abc.Sequence[tuple[str, str]]) -> None:
        ...
    @property
    def kernel_name(self) -> str:
        """
        InstBIRKernel.kernel_name: the node's "kernel_name" field (BIR JSON).
        """
    @kernel_name.setter
    def kernel_name(self, arg0: str) -> None:
        ...
    @property
    def lnc_size(self) -> int | None:
        """
        InstBIRKernel.lnc_size: the node's "lnc_size" field (BIR JSON).
        """
    @lnc_size.setter
    def lnc_size(self, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def lower_bound(self) -> float | None:
        """
        InstBIRKernel.lower_bound: the node's "lower_bound" field (BIR JSON).
        """
    @lower_bound.setter
    def lower_bound(self, arg0: typing.SupportsFloat | typing.SupportsIndex | None) -> None:
        ...
    @property
    def norm_type(self) -> int | None:
        """
        InstBIRKernel.norm_type: the node's "norm_type" field (BIR JSON).
        """
    @norm_type.setter
    def norm_type(self, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def output_layout(self) -> int | None:
        """
        InstBIRKernel.output_layout: the node's "output_layout" field (BIR JSON).
        """
    @output_layout.setter
    def output_layout(self, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def psum_buf_shape(self) -> list[int]:
        """
        InstBIRKernel.psum_buf_shape: the node's "psum_buf_shape" field (BIR JSON).
        """
    @psum_buf_shape.setter
    def psum_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def quant_kernel(self) -> bool | None:
        """
        InstBIRKernel.quant_kernel: the node's "quant_kernel" field (BIR JSON).
        """
    @quant_kernel.setter
    def quant_kernel(self, arg0: bool | None) -> None:
        ...
    @property
    def sb_buf_shape(self) -> list[int]:
        """
        InstBIRKernel.sb_buf_shape: the node's "sb_buf_shape" field (BIR JSON).
        """
    @sb_buf_shape.setter
    def sb_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def skip_gate(self) -> bool | None:
        """
        InstBIRKernel.skip_gate: the node's "skip_gate" field (BIR JSON).
        """
    @skip_gate.setter
    def skip_gate(self, arg0: bool | None) -> None:
        ...
    @property
    def srcs_shape(self) -> list[list[int]]:
        """
        InstBIRKernel.srcs_shape: the node's "srcs_shape" field (BIR JSON).
        """
    @srcs_shape.setter
    def srcs_shape(self, arg0: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        ...
    @property
    def store_add(self) -> bool | None:
        """
        InstBIRKernel.store_add: the node's "store_add" field (BIR JSON).
        """
    @store_add.setter
    def store_add(self, arg0: bool | None) -> None:
        ...
    @property
    def up_bias(self) -> bool | None:
        """
        InstBIRKernel.up_bias: the node's "up_bias" field (BIR JSON).
        """
    @up_bias.setter
    def up_bias(self, arg0: bool | None) -> None:
        ...
class InstNKIKernel(Instruction):
    """
    bir::InstNKIKernel: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('func', 'func_args', 'func_outs', 'sb_buf_shape', 'psum_buf_shape')
    operand_rule: typing.ClassVar[tuple] = (0, 64, 0, 64)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_func(self: Instruction, arg0: str) -> None:
        """
        Sets InstNKIKernel.func.
        """
    def set_func_args(self: Instruction, arg0: collections.abc.Sequence[str]) -> None:
        """
        Sets InstNKIKernel.func_args.
        """
    def set_func_outs(self: Instruction, arg0: collections.abc.Sequence[str]) -> None:
        """
        Sets InstNKIKernel.func_outs.
        """
    def set_psum_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstNKIKernel.psum_buf_shape.
        """
    def set_sb_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstNKIKernel.sb_buf_shape.
        """
    @property
    def func(self) -> str:
        """
        InstNKIKernel.func: the node's "func" field (BIR JSON).
        """
    @func.setter
    def func(self, arg0: str) -> None:
        ...
    @property
    def func_args(self) -> list[str]:
        """
        InstNKIKernel.func_args: the node's "func_args" field (BIR JSON).
        """
    @func_args.setter
    def func_args(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def func_outs(self) -> list[str]:
        """
        InstNKIKernel.func_outs: the node's "func_outs" field (BIR JSON).
        """
    @func_outs.setter
    def func_outs(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def psum_buf_shape(self) -> list[int]:
        """
        InstNKIKernel.psum_buf_shape: the node's "psum_buf_shape" field (BIR JSON).
        """
    @psum_buf_shape.setter
    def psum_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def sb_buf_shape(self) -> list[int]:
        """
        InstNKIKernel.sb_buf_shape: the node's "sb_buf_shape" field (BIR JSON).
        """
    @sb_buf_shape.setter
    def sb_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class InstNKIKLIRKernel(Instruction):
    """
    bir::InstNKIKLIRKernel: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = ('klir_binary', 'kernel_format', 'nki_binary_version_identifier', 'func_name', 'func_args', 'func_outs', 'sb_buf_shape', 'psum_buf_shape', 'grid')
    operand_rule: typing.ClassVar[tuple] = (0, 64, 0, 64)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
    def set_func_args(self: Instruction, arg0: collections.abc.Sequence[str]) -> None:
        """
        Sets InstNKIKLIRKernel.func_args.
        """
    def set_func_name(self: Instruction, arg0: str) -> None:
        """
        Sets InstNKIKLIRKernel.func_name.
        """
    def set_func_outs(self: Instruction, arg0: collections.abc.Sequence[str]) -> None:
        """
        Sets InstNKIKLIRKernel.func_outs.
        """
    def set_grid(self: Instruction, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sets InstNKIKLIRKernel.grid.
        """
    def set_kernel_format(self: Instruction, arg0: str) -> None:
        """
        Sets InstNKIKLIRKernel.kernel_format.
        """
    def set_klir_binary(self: Instruction, arg0: str) -> None:
        """
        Sets InstNKIKLIRKernel.klir_binary.
        """
    def set_nki_binary_version_identifier(self: Instruction, arg0: str) -> None:
        """
        Sets InstNKIKLIRKernel.nki_binary_version_identifier.
        """
    def set_psum_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstNKIKLIRKernel.psum_buf_shape.
        """
    def set_sb_buf_shape(self: Instruction, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        Sets InstNKIKLIRKernel.sb_buf_shape.
        """
    @property
    def func_args(self) -> list[str]:
        """
        InstNKIKLIRKernel.func_args: the node's "func_args" field (BIR JSON).
        """
    @func_args.setter
    def func_args(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def func_name(self) -> str:
        """
        InstNKIKLIRKernel.func_name: the node's "func_name" field (BIR JSON).
        """
    @func_name.setter
    def func_name(self, arg0: str) -> None:
        ...
    @property
    def func_outs(self) -> list[str]:
        """
        InstNKIKLIRKernel.func_outs: the node's "func_outs" field (BIR JSON).
        """
    @func_outs.setter
    def func_outs(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def grid(self) -> int:
        """
        InstNKIKLIRKernel.grid: the node's "grid" field (BIR JSON).
        """
    @grid.setter
    def grid(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def kernel_format(self) -> str:
        """
        InstNKIKLIRKernel.kernel_format: the node's "kernel_format" field (BIR JSON).
        """
    @kernel_format.setter
    def kernel_format(self, arg0: str) -> None:
        ...
    @property
    def klir_binary(self) -> str:
        """
        InstNKIKLIRKernel.klir_binary: the node's "klir_binary" field (BIR JSON).
        """
    @klir_binary.setter
    def klir_binary(self, arg0: str) -> None:
        ...
    @property
    def nki_binary_version_identifier(self) -> str:
        """
        InstNKIKLIRKernel.nki_binary_version_identifier: the node's "nki_binary_version_identifier" field (BIR JSON).
        """
    @nki_binary_version_identifier.setter
    def nki_binary_version_identifier(self, arg0: str) -> None:
        ...
    @property
    def psum_buf_shape(self) -> list[int]:
        """
        InstNKIKLIRKernel.psum_buf_shape: the node's "psum_buf_shape" field (BIR JSON).
        """
    @psum_buf_shape.setter
    def psum_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def sb_buf_shape(self) -> list[int]:
        """
        InstNKIKLIRKernel.sb_buf_shape: the node's "sb_buf_shape" field (BIR JSON).
        """
    @sb_buf_shape.setter
    def sb_buf_shape(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class InstUnmodeled(Instruction):
    """
    bir::InstUnmodeled: a BIR node class (its fields: field_names; its operand counts: operand_rule).
    """
    field_names: typing.ClassVar[tuple] = tuple()
    operand_rule: typing.ClassVar[tuple] = (0, 64, 0, 64)
    @staticmethod
    def classof(instruction: Instruction) -> bool:
        """
        Whether `instruction` is of this node class (LLVM-style classof).
        """
class BasicBlock:
    """
    bir::BasicBlock: a straight-line list of instructions it owns.
    """
    def __getitem__(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> Instruction:
        """
        The instruction at index `i` (negative from the end).
        """
    def __len__(self) -> int:
        """
        How many instructions the block holds.
        """
    def addInstruction(self, opcode: typing.SupportsInt | typing.SupportsIndex, name: str = '') -> Instruction:
        """
        Appends a new instruction of `opcode` (an InstructionType ordinal), as its node class, and returns it.
        """
    @property
    def instructions(self) -> list[Instruction]:
        """
        The block's instructions, in order.
        """
    @property
    def name(self) -> str:
        """
        The block's name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
class Function:
    """
    bir::Function: the basic blocks and the memory allocations of one NeuronCore's program.
    """
    def addBlock(self, name: str = '') -> BasicBlock:
        """
        Appends a new, empty basic block and returns it.
        """
    def createDramTensor(self, name: str, type: MemoryType, dtype: DType, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], kind: TensorKind = TensorKind.Internal) -> MemoryLocation:
        """
        Allocates a DRAM tensor of `shape` and returns its memory location.
        """
    def createOnChipTensor(self, name: str, type: MemoryType, dtype: DType, partitions: typing.SupportsInt | typing.SupportsIndex, bytes_per_partition: typing.SupportsInt | typing.SupportsIndex, base_partition: typing.SupportsInt | typing.SupportsIndex = 0, addr: typing.SupportsInt | typing.SupportsIndex = 0, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = []) -> MemoryLocation:
        """
        Allocates an SBUF/PSUM tensor (`partitions` x `bytes_per_partition` from `base_partition`, byte address `addr`) and returns its memory location.
        """
    def findLocation(self, name: str) -> MemoryLocation:
        """
        The memory location named `name`, or None.
        """
    def uniqueTensorName(self, base: str) -> str:
        """
        `base`, or `base` with a numeric suffix, that no tensor of the function is named yet.
        """
    @property
    def allocations(self) -> list[MemoryLocationSet]:
        """
        The function's tensors (DRAM and on-chip), in allocation order.
        """
    @property
    def attributes(self) -> list[str]:
        """
        The function's attributes (BIR JSON "attributes").
        """
    @attributes.setter
    def attributes(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def blocks(self) -> list[BasicBlock]:
        """
        The function's basic blocks, in order.
        """
    @property
    def instruction_count(self) -> int:
        """
        How many instructions the function's blocks hold.
        """
    @property
    def name(self) -> str:
        """
        The function's name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
class Module:
    """
    bir::Module: one function per NeuronCore, saved and loaded as BIR JSON.
    """
    @staticmethod
    def from_binary(data: bytes, verify: bool = True) -> Module:
        """
        A module read from BIR binary (Module.to_binary), verified unless `verify` is False; BIRError names the byte offset of any problem.
        """
    @staticmethod
    def from_json(text: str, verify: bool = True, plain_first: bool = True) -> Module:
        """
        A module read from BIR JSON text, verified unless `verify` is False (BIRError names the JSON path of any problem). `plain_first` False skips the fast reader of plain text and reads through nlohmann's JSON document only: the same module or error, several times slower (for comparisons).
        """
    def __init__(self) -> None:
        """
        An empty module.
        """
    def addFunction(self, name: str = '') -> Function:
        """
        Appends a new, empty function and returns it.
        """
    def clone(self) -> Module:
        """
        A deep copy: same functions, allocations, blocks and instructions (names kept), sharing nothing with this module; its JSON is byte-identical.
        """
    def function(self, neuron_core_id: typing.SupportsInt | typing.SupportsIndex = 0) -> Function:
        """
        The function of NeuronCore `neuron_core_id`.
        """
    def to_binary(self) -> bytes:
        """
        The module as BIR binary (cpp/bir/Binary.h): what its BIR JSON holds, in a sixth of the bytes of a traced kernel's JSON, read about seven times faster; neuronxsim's own form (the sweep's trace cache), not a compiler's.
        """
    def to_json(self, indent: typing.SupportsInt | typing.SupportsIndex = 1) -> str:
        """
        The module as BIR JSON text (`indent` < 0: on one line).
        """
    def verify(self) -> None:
        """
        Checks the module; raises BIRError on the first problem.
        """
    @property
    def arch(self) -> str:
        """
        The target generation's name ("gen2", "gen3", or another name of one: "trn1", ...).
        """
    @arch.setter
    def arch(self, arg1: str) -> None:
        ...
    @property
    def files_dir(self) -> str:
        """
        The folder the module's file references (IT55 compiled kernels, IT56 KLR files) resolve in: where it was loaded from or lowered into; "" = the working directory. Not saved.
        """
    @files_dir.setter
    def files_dir(self, arg0: str) -> None:
        ...
    @property
    def functions(self) -> list[Function]:
        """
        The module's functions, in order.
        """
    @property
    def neuron_core_id(self) -> int:
        """
        The NeuronCore the module's main function runs on.
        """
    @neuron_core_id.setter
    def neuron_core_id(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class View:
    """
    bir::View: an access-pattern value over one memory location -- element offset, logical [step, num] dims outermost first and, on chip, a partition range -- with the view operations (slice, at, merge, flatten, flattenDims, reshape, rows, split, permute, broadcast, bitcast, normalised). Every operation returns a new view of the same elements; ap() makes the operand.
    """
    @staticmethod
    def ofOperand(ap: AccessPattern, what: str) -> View:
        """
        The logical N-d view of a DRAM kernel-node operand (its partition-first pair moved back to its dim); `what` names the operand in errors.
        """
    @staticmethod
    def ofShape(location: MemoryLocation, dtype: DType, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> View:
        """
        The whole of `location` seen as a row-major array of `shape` elements of `dtype`.
        """
    @staticmethod
    def ofStrides(offset: typing.SupportsInt | typing.SupportsIndex, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], strides: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> View:
        """
        A view of no location counting elements: dim d of size shape[d] and step strides[d] from element `offset` (a tracer's strided view).
        """
    @staticmethod
    def onChip(location: MemoryLocation, dtype: DType, partitions: typing.SupportsInt | typing.SupportsIndex, free: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> View:
        """
        `partitions` partitions of the SB/PSUM `location` from its first row, contiguous free dims of shape `free`.
        """
    def __init__(self, location: MemoryLocation, dtype: DType, offset: typing.SupportsInt | typing.SupportsIndex, dims: collections.abc.Sequence[APPair]) -> None:
        """
        A DRAM view: `dims` ([step, num] pairs, outermost first) from element `offset` of `location` (None for a view of no location).
        """
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    def ap(self) -> AccessPattern:
        """
        The AccessPattern enumerating the view's elements (partition pair first on chip).
        """
    def at(self, dim: typing.SupportsInt | typing.SupportsIndex, index: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        Element `index` of dim `dim`; the dim is dropped.
        """
    def bitcast(self, dtype: DType) -> View:
        """
        The same bytes as `dtype` elements (the innermost dim contiguous and aligned).
        """
    def broadcast(self, dim: typing.SupportsInt | typing.SupportsIndex, n: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        A new dim of n elements at position `dim` repeating the same elements (step 0).
        """
    def flatten(self) -> View:
        """
        Every dim as one: unit dims dropped, the others must nest.
        """
    def flattenDims(self, first: typing.SupportsInt | typing.SupportsIndex, last: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        Dims `first`..`last` (inclusive) as one: unit dims dropped, the rest must nest (the step of the innermost non-unit dim, 1 when none is left).
        """
    def merge(self, dim: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        Dims `dim` and `dim` + 1 as one (they must nest).
        """
    def normalised(self) -> View:
        """
        Unit dims dropped and contiguous dims merged; the same elements in the same order.
        """
    def partitionFirstPairs(self, partition_dim: typing.SupportsInt | typing.SupportsIndex) -> list[APPair]:
        """
        A DRAM view's [step, num] pairs with dim `partition_dim`'s pair first (a kernel-node operand).
        """
    def partitionRange(self, p0: typing.SupportsInt | typing.SupportsIndex, n: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        Partitions [p0, p0 + n) of an on-chip view.
        """
    def permute(self, order: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> View:
        """
        Dims reordered: result dim i is dim order[i].
        """
    def reshape(self, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> View:
        """
        The same elements in row-major order as `shape`, moving none (NumPy's no-copy reshape; a unit dim gets step 1); refused when that needs a copy.
        """
    def rows(self) -> View:
        """
        Every dim but the last merged: the [rows, row elements] view.
        """
    def slice(self, dim: typing.SupportsInt | typing.SupportsIndex, start: typing.SupportsInt | typing.SupportsIndex, count: typing.SupportsInt | typing.SupportsIndex, step: typing.SupportsInt | typing.SupportsIndex = 1) -> View:
        """
        Elements start, start + step, ... (count of them) of dim `dim` (a negative step walks it backwards).
        """
    def split(self, dim: typing.SupportsInt | typing.SupportsIndex, inner: typing.SupportsInt | typing.SupportsIndex) -> View:
        """
        Dim `dim` split into [num / inner, inner].
        """
    @property
    def dims(self) -> list[APPair]:
        """
        The logical (on chip: free) dims as [step, num] pairs.
        """
    @property
    def dtype(self) -> DType:
        """
        The element type; offsets and steps count its elements.
        """
    @property
    def is_on_chip(self) -> bool:
        """
        Whether the view has a partition range (SB/PSUM).
        """
    @property
    def location(self) -> MemoryLocation:
        """
        The memory location viewed (None for a detached view).
        """
    @property
    def num_elements(self) -> int:
        """
        Elements the view addresses.
        """
    @property
    def offset(self) -> int:
        """
        Element 0's offset in the location, in elements.
        """
    @property
    def partitions(self) -> int:
        """
        The partition range's size (1 for DRAM views).
        """
    @property
    def rank(self) -> int:
        """
        How many logical (on chip: free) dims the view has.
        """
    @property
    def row_elements(self) -> int:
        """
        Elements of the dtype per partition row of an on-chip location, else 0.
        """
    @property
    def shape(self) -> list[int]:
        """
        The logical (on chip: free) dims' sizes.
        """
    @property
    def strided(self) -> tuple[int, tuple, tuple]:
        """
        (offset, shape, strides) as tuples of ints: the logical (on chip: free) dims' sizes and steps.
        """
class LegalitySpace:
    """
    Members:
    
      SBUF
    
      PSUM
    
      DRAM
    
      Immediate
    """
    DRAM: typing.ClassVar[LegalitySpace]
    Immediate: typing.ClassVar[LegalitySpace]
    PSUM: typing.ClassVar[LegalitySpace]
    SBUF: typing.ClassVar[LegalitySpace]
    __members__: typing.ClassVar[dict[str, LegalitySpace]]
    @typing.overload
    def __eq__(self, other: LegalitySpace) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: LegalitySpace) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class LegalityRule:
    def __repr__(self) -> str:
        ...
    @property
    def id(self) -> str:
        ...
    @property
    def requires(self) -> str:
        ...
class LegalityViolation:
    def __repr__(self) -> str:
        ...
    @property
    def message(self) -> str:
        ...
    @property
    def rule(self) -> str:
        ...
class LegalityOperand:
    def __init__(self, space: LegalitySpace, dtype: DType, partitions: typing.SupportsInt | typing.SupportsIndex, free_elements: typing.SupportsInt | typing.SupportsIndex, placed: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex] | None = None) -> None:
        ...
    @property
    def dtype(self) -> DType:
        ...
    @property
    def free_elements(self) -> int:
        ...
    @property
    def partitions(self) -> int:
        ...
    @property
    def space(self) -> LegalitySpace:
        ...
def arch_aliases(arch: str) -> list[str]:
    """
    Every name accepted for the generation `arch`, canonical name first ([] when unknown).
    """
def canonical_arch(arch: str) -> str:
    """
    The canonical name ('trn1', 'trn2') of any accepted name of a generation; '' when unknown.
    """
def check_start_partition(start: typing.SupportsInt | typing.SupportsIndex, partitions: typing.SupportsInt | typing.SupportsIndex) -> str:
    """
    The start-partition rule for a compute-engine access of `partitions` partitions from `start`: "" when it holds, else the reason.
    """
def dtype_size(dtype: DType) -> int:
    """
    The size of one `dtype` element in bytes.
    """
def emit_trace(function: Function, tensors: list, tensor_of: list, records: list) -> None:
    """
    Creates a function's tensors from (name, memory type, dtype, shape, kind, partitions, bytes per partition, start partition, address) tuples and appends a block of ISA nodes from (opcode, engine, source, fields, ins, outs, ...) records; operands are (storage number, offset, pairs, ...) over tensor_of[storage number], or numbers.
    """
def field_offsets() -> dict:
    ...
def instruction_type_string(arg0: typing.SupportsInt | typing.SupportsIndex) -> str:
    ...
def known_archs() -> list[str]:
    """
    The canonical names of the known generations, oldest first.
    """
def legality_activation_reduce(acc: AccumCmd, acc_op: AluOp, arch: str) -> LegalityViolation | None:
    ...
def legality_alu_ops(opcode: typing.SupportsInt | typing.SupportsIndex, engine: Engine, op0: AluOp, op1: AluOp) -> LegalityViolation | None:
    ...
def legality_bitvec_dtypes(opcode: typing.SupportsInt | typing.SupportsIndex, op0: AluOp, op1: AluOp, ins: collections.abc.Sequence[DType], outs: collections.abc.Sequence[DType]) -> LegalityViolation | None:
    ...
def legality_bn_stats(data: LegalityOperand, arch: str) -> LegalityViolation | None:
    ...
def legality_dma(opcode: typing.SupportsInt | typing.SupportsIndex, src: LegalityOperand, dst: LegalityOperand, index: LegalityOperand | None, mode: DmaMode, dst_rmw_op: AluOp, dge_type: DgeType, indirect_dim: typing.SupportsInt | typing.SupportsIndex, src_2d: bool, engine: Engine, arch: str) -> LegalityViolation | None:
    ...
def legality_dma_trigger(opcode: typing.SupportsInt | typing.SupportsIndex, dge_type: DgeType, engine: Engine, src: DType, dst: DType, arch: str) -> LegalityViolation | None:
    ...
def legality_dve_transpose(data: LegalityOperand, out: LegalityOperand, arch: str) -> LegalityViolation | None:
    ...
def legality_engine_operand(opcode: typing.SupportsInt | typing.SupportsIndex, engine: Engine, operand: LegalityOperand, output: bool, arch: str) -> LegalityViolation | None:
    ...
def legality_generation(opcode: typing.SupportsInt | typing.SupportsIndex, engine: Engine, arch: str) -> LegalityViolation | None:
    ...
def legality_is_bitvec_op(op: AluOp) -> bool:
    ...
def legality_is_reduce_op(op: AluOp) -> bool:
    ...
def legality_local_gather(src: LegalityOperand, index: LegalityOperand, num_elem_per_idx: typing.SupportsInt | typing.SupportsIndex, num_valid_indices: typing.SupportsInt | typing.SupportsIndex, arch: str) -> LegalityViolation | None:
    ...
def legality_matmul(stationary: LegalityOperand, moving: LegalityOperand, out: LegalityOperand, arch: str, is_transpose: bool, start: bool, perf_mode: PerfMode, tile_size: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], tile_position: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> LegalityViolation | None:
    ...
def legality_max8_family(opcode: typing.SupportsInt | typing.SupportsIndex, data: LegalityOperand, arch: str) -> LegalityViolation | None:
    ...
def legality_partition_reduce_op(op: AluOp) -> LegalityViolation | None:
    ...
def legality_pe_input_dtypes(arch: str) -> list[DType]:
    ...
def legality_psum_inputs(opcode: typing.SupportsInt | typing.SupportsIndex, a: LegalityOperand, b: LegalityOperand) -> LegalityViolation | None:
    ...
def legality_reduce_op(opcode: typing.SupportsInt | typing.SupportsIndex, reduce_op: AluOp) -> LegalityViolation | None:
    ...
def legality_register_fold(reduce_op: AluOp, cumulative: bool) -> LegalityViolation | None:
    ...
def legality_rules() -> list[LegalityRule]:
    ...
def machine_config(arch: str) -> dict:
    """
    Every field of bir::MachineConfig of the generation `arch`, by name.
    """
def opcode_categories() -> list:
    ...
def opcode_names() -> list:
    ...
def opcode_node_classes() -> list:
    ...
def opcode_origins() -> list:
    ...
def string2InstructionType(arg0: str) -> int:
    ...
BIR_VERSION: int = 2
FORMAT_VERSION: int = 1
