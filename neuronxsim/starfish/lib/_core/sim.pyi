"""
libnxsim: the NeuronCore tile-engine simulator and bir::Hwm
"""
from __future__ import annotations
import neuronxsim.starfish.lib._core.bir
import numpy
import typing
__all__: list[str] = ['NUM_ENGINES', 'ORDER_WHOLE_BLOCK', 'PreparedProgram', 'SimResult', 'Simulator', 'TRACK_NAMES', 'TraceProgress', 'engine_of', 'engine_orders', 'lane_name', 'latency', 'schedule_function', 'schedule_module', 'schedule_module_prepared']
class PreparedProgram:
    """
    The scheduling pass's timing-mode decoding of a module (sim/Simulator.h): for the library's own trace-then-simulate paths only.
    """
    @property
    def arch(self) -> str:
        ...
    @property
    def instruction_count(self) -> int:
        ...
class TraceProgress:
    """
    How far write_trace is: done of total slices (read it from another thread).
    """
    def __init__(self) -> None:
        ...
    @property
    def done(self) -> int:
        ...
    @property
    def total(self) -> int:
        ...
class SimResult:
    def record_columns(self) -> dict:
        ...
    def slice_columns(self) -> dict:
        ...
    def write_trace(self, path: str, progress: TraceProgress = None) -> None:
        """
        Writes the trace file; `progress` (a TraceProgress) is updated as it goes.
        """
    @property
    def arch(self) -> str:
        ...
    @property
    def cores(self) -> list:
        ...
    @property
    def instruction_count(self) -> int:
        ...
    @property
    def mode(self) -> str:
        ...
    @property
    def pe_adjusted_flops(self) -> float:
        ...
    @property
    def pe_flops(self) -> int:
        ...
    @property
    def pe_mfu(self) -> float:
        ...
    @property
    def prepare_seconds(self) -> float:
        ...
    @property
    def prints(self) -> list:
        ...
    @property
    def record_count(self) -> int:
        ...
    @property
    def run_cpu_seconds(self) -> float:
        ...
    @property
    def run_seconds(self) -> float:
        ...
    @property
    def total_ns(self) -> float:
        ...
    @property
    def unwritten_outputs(self) -> list:
        """
        (name, elements never written, the first one's flat index) of each Output tensor the run left partly unwritten (full mode), in the module's tensor order.
        """
class Simulator:
    def __init__(self, module: neuronxsim.starfish.lib._core.bir.Module, arch: str | None = None, mode: str = 'full', neuron_core_id: typing.SupportsInt | typing.SupportsIndex | None = None, threads: typing.SupportsInt | typing.SupportsIndex = 0, records: bool = True, prepared: PreparedProgram = None) -> None:
        """
        `arch`: None runs the module's own arch; another name must be of the same generation. `prepared`: start from that PreparedProgram of `module` (timing mode, its arch, every function) instead of decoding the module.
        """
    def bind(self, name: str, array: numpy.ndarray) -> None:
        ...
    def instructions_done(self) -> int:
        """
        Instructions the run in progress has done (for a progress bar; read from another thread).
        """
    def run(self) -> SimResult:
        ...
    def tensors(self) -> list:
        ...
    @property
    def config(self) -> dict:
        ...
    @property
    def instruction_count(self) -> int:
        ...
def engine_of(arg0: neuronxsim.starfish.lib._core.bir.Instruction) -> neuronxsim.starfish.lib._core.bir.Engine:
    ...
def engine_orders(opcode: typing.SupportsInt | typing.SupportsIndex, accumulates: bool, random_memset: bool) -> int:
    """
    The engine-state orders an instruction of this opcode number keeps beside its memory accesses, as bits (sim/ListSchedule.h EngineOrder: 1 ScalarE accumulators, 2 DevicePrint, 4 VectorE accumulation registers, 8 random generators, 16 nothing around it may move); accumulates: an Activation whose acc is not Idle; random_memset: a Memset in Random mode.
    """
def lane_name(track: typing.SupportsInt | typing.SupportsIndex, lane: typing.SupportsInt | typing.SupportsIndex) -> str:
    """
    The trace's name of a track's lane: "ACT", "ACT (pipelined)", "ACT (pipelined 2)".
    """
def latency(instruction: neuronxsim.starfish.lib._core.bir.Instruction, arch: str = 'trn1') -> dict:
    """
    bir::Hwm::getLatency for one instruction: its engine, cycles and nanoseconds.
    """
def schedule_function(module: neuronxsim.starfish.lib._core.bir.Module, function: typing.SupportsInt | typing.SupportsIndex, arch: str) -> dict:
    """
    Reorders functions[function]'s blocks by list scheduling over their dependency graph (sim/ListSchedule.h); returns {blocks reordered, blocks kept, instructions moved}.
    """
def schedule_module(module: neuronxsim.starfish.lib._core.bir.Module, arch: str) -> list:
    """
    schedule_function for every function of the module, in order, from one decoding of the module when the simulator accepts it whole; returns the list of their dicts.
    """
def schedule_module_prepared(module: neuronxsim.starfish.lib._core.bir.Module, arch: str) -> tuple[list, PreparedProgram | None]:
    """
    schedule_module, and its decoding of the module reordered in step (a PreparedProgram for Simulator(prepared=...), valid while nothing changes the module), or None where some function was refused: (stats, prepared).
    """
NUM_ENGINES: int = 5
ORDER_WHOLE_BLOCK: int = 16
TRACK_NAMES: list = ['PE', 'ACT', 'DVE', 'Pool', 'SP', 'DMA0', 'DMA1', 'DMA2', 'DMA3', 'DMA4', 'DMA5', 'DMA6', 'DMA7', 'DMA8', 'DMA9', 'DMA10', 'DMA11', 'DMA12', 'DMA13', 'DMA14', 'DMA15']
