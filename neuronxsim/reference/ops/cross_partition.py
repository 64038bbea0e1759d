"""Instructions that move data between partitions: StreamShuffle and StreamTranspose."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.numbers import convert, same_format
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step

QUADRANT = 32  # partitions per shuffle quadrant; also the StreamTranspose limit
LEAVE_UNWRITTEN = 255


def stream_shuffle(step: Step) -> None:
    out, src = step.outs[0], step.ins[0]
    lanes, per_lane = out.shape
    if src.shape[1] != per_lane:
        raise Refusal(f"ins[0] has {src.shape[1]} elements per partition, outs[0] {per_lane}")
    # Its own partitions (one may be broadcast to a quadrant), as stored: the elements move as
    # bytes, as StreamTranspose's do (the dtypes must match).
    if not same_format(src.dtype, out.dtype):
        raise Refusal(f"ins[0] is {src.dtype} and outs[0] {out.dtype}: a stream shuffle moves one dtype")
    data = src.read_raw()
    mask = np.asarray(step.inst.shuffle_mask, dtype=np.int64)
    if mask.shape != (QUADRANT,):
        raise Refusal(f"shuffle_mask has {mask.size} entries, expected {QUADRANT}")
    bad = mask[((mask < 0) | (mask >= QUADRANT)) & (mask != LEAVE_UNWRITTEN)]
    if bad.size:
        raise Refusal(f"shuffle_mask entry {int(bad[0])} is neither a lane 0..{QUADRANT - 1} "
                      f"nor {LEAVE_UNWRITTEN}")
    lane = np.arange(lanes)
    entry = mask[lane % QUADRANT]
    written = entry != LEAVE_UNWRITTEN
    source = QUADRANT * (lane // QUADRANT) + np.where(written, entry, 0)
    beyond = written & (source >= data.shape[0])
    if beyond.any():
        i = int(np.argmax(beyond))
        raise Refusal(f"output lane {i} takes input lane {int(source[i])} of {data.shape[0]}")
    out.write_raw(data[source], where=np.broadcast_to(written[:, None], out.shape))


def stream_transpose(step: Step) -> None:
    src, out = step.ins[0], step.outs[0]
    lanes, per_lane = src.shape
    if lanes > QUADRANT or per_lane > QUADRANT:
        raise Refusal(f"StreamTranspose takes at most {QUADRANT}x{QUADRANT}, ins[0] is "
                      f"{lanes}x{per_lane}")
    out.expect(per_lane, lanes)
    out.write_raw(convert(src.read_raw(), out.dtype).T)


HANDLERS = {
    "StreamShuffle": stream_shuffle,
    "StreamTranspose": stream_transpose,
}
