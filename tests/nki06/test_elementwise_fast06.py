"""The C paths of ``nisa.tensor_scalar``, ``nisa.tensor_tensor``, ``nisa.activation``,
``nisa.activation_reduce``, ``nisa.tensor_reduce`` and ``nisa.tensor_copy`` (their ApiCall's ``fast``,
cpp/python/trace_nki06_lanewise.cpp)
against the Python definitions alone (``fast`` set to None): every kernel here traces to the same
module (or fails with the same error), and its instructions answer handles of the same lengths,
either way. The kernels walk rows in 128-partition tiles (the last one short: 300 and 129 rows),
with several dtypes, [P, 1] operands, scale and bias variants, reverse flags, op1/operand1,
positional and keyword arguments, names, and the cases the C paths leave to the definitions
(operators they do not take, number biases, other engines, reshaped operands, errors)."""

import sys

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki06.kernel import trace_kernel

CALLS = (nisa.tensor_scalar, nisa.tensor_tensor, nisa.activation, nisa.activation_reduce,
         nisa.tensor_reduce, nisa.tensor_copy)
HANDLES = []  # the handle length of each instruction a kernel kept, in call order


def _outcome(kernel, *args):
    """The traced module's JSON and the handles' lengths, or the refusal's type and message."""
    HANDLES.clear()
    try:
        json = trace_kernel(kernel, *args, schedule="source").module.to_json(-1)
    except (NKIError, TypeError, ValueError, OverflowError) as e:
        return f"{type(e).__name__}: {e}", list(HANDLES)
    return json, list(HANDLES)


def _same_with_c_and_python(monkeypatch, kernel, *args):
    """The kernel's outcome, the same with the C paths and without; also the names of the
    definitions that ran with the C paths set (those the C paths left to them, in call order)."""
    codes = {call.__wrapped__.__code__: call.__name__ for call in CALLS}
    ran = []

    def profile(frame, event, arg):  # (a wrapper around `fast` would move the kernel's line)
        if event == "call" and frame.f_code in codes:
            ran.append(codes[frame.f_code])

    for call in CALLS:
        assert call.fast is not None
    sys.setprofile(profile)
    try:
        c = _outcome(kernel, *args)
    finally:
        sys.setprofile(None)
    with monkeypatch.context() as m:
        for call in CALLS:
            m.setattr(call, "fast", None)
        python = _outcome(kernel, *args)
    assert c == python
    return c[0], ran


class HashRaises:
    """An operator whose hash raises ValueError: a memo lookup's error that is not "unhashable"
    (TypeError), which the definitions raise and the C paths must too."""

    def __hash__(self):
        raise ValueError("this operator refuses to be hashed")


def _keep(h):
    HANDLES.append(len(h.handle))
    return h


@nki.jit
def elementwise(x, g, case):
    """Row blocks of x (the last one short when its rows are not a multiple of 128) through the
    instructions of `case`, into y, stored."""
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    gt = nl.ndarray((128, C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=gt, src=g.ap([[0, 128], [1, C]]))
    for r in range(0, R, 128):
        h = min(128, R - r)
        full = nl.ndarray((128, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=full[0:h, :], src=x[r:r + h, :])
        t = full if h == 128 else full[0:h, :]
        yfull = nl.ndarray((128, C), dtype=nl.float32, buffer=nl.sbuf)
        y = yfull if h == 128 else yfull[0:h, :]
        cfull = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        col = cfull if h == 128 else cfull[0:h, :]
        g_ = gt if h == 128 else gt[0:h, :]
        _keep(nisa.activation_reduce(dst=y, op=nl.square, data=t, reduce_op=nl.add, reduce_res=col))
        _keep(nisa.tensor_scalar(dst=col, data=col, op0=nl.multiply, operand0=1.0 / C, op1=nl.add,
                                 operand1=1e-6))
        _cases(case, t, y, col, g_, h, C, out, r)
        nisa.dma_copy(dst=out[r:r + h, :], src=y)
    return out


def _cases(case, t, y, col, g, h, C, out, r):
    # ---- tensor_scalar ----
    if case == "ts number":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.multiply, operand0=2.0))
    elif case == "ts positional two ops":
        _keep(nisa.tensor_scalar(y, t, nl.subtract, 1, True, nl.multiply, 0.5, False))
    elif case == "ts column":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.divide, operand0=col))
    elif case == "ts two columns":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.subtract, operand0=col, op1=nl.multiply,
                                 operand1=col, reverse1=True))
    elif case == "ts column then number":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.subtract, operand0=col, reverse0=True,
                                 op1=nl.multiply, operand1=3))
    elif case == "ts number then column":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=1.5, op1=nl.multiply,
                                 operand1=col))
    elif case == "ts operand0 none":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=None))
    elif case == "ts rsqrt":
        _keep(nisa.tensor_scalar(dst=col, data=col, op0=nl.rsqrt, operand0=None))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.multiply, operand0=col))
    elif case == "ts engine vector named":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.maximum, operand0=0.0,
                                 engine=nisa.vector_engine, name="relu"))
    elif case == "ts engine scalar":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.multiply, operand0=2.0,
                                 engine=nisa.scalar_engine))
    elif case == "ts bf16 dst":
        b = nl.ndarray(t.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.tensor_scalar(dst=b, data=t, op0=nl.multiply, operand0=col))
        _keep(nisa.tensor_scalar(dst=y, data=b, op0=nl.add, operand0=0.25))
    elif case == "ts in place":
        _keep(nisa.tensor_copy(dst=y, src=t))
        _keep(nisa.tensor_scalar(dst=y, data=y, op0=nl.multiply, operand0=col, op1=nl.add,
                                 operand1=col))
    elif case == "ts numpy scalar":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=np.multiply, operand0=np.float32(2.0)))
    elif case == "ts reverse not a bool":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.subtract, operand0=1.0, reverse0=1))
    elif case == "ts huge int":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=10 ** 400))
    elif case == "ts operand1 without op1":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=1.0, operand1=2.0))
    elif case == "ts op1 without operand1":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=1.0, op1=nl.add))
    elif case == "ts wrong keyword":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=1.0, mask=None))
    elif case == "ts twice":
        _keep(nisa.tensor_scalar(y, t, nl.add, 1.0, data=t))
    elif case == "ts missing":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add))
    elif case == "ts wrong shape":
        _keep(nisa.tensor_scalar(dst=y[:, 0:C - 1], data=t, op0=nl.add, operand0=1.0))
    elif case == "ts reshaped data":
        _keep(nisa.tensor_scalar(dst=y.reshape((h, 1, C)), data=t, op0=nl.add, operand0=1.0))
    elif case == "ts column of other partitions":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col[0:h - 1, :] if h > 1 else 1))
    elif case == "ts column not [P, 1]":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=g))
    elif case == "ts not an op":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=3, operand0=1.0))
    elif case == "ts op hash raises":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=HashRaises(), operand0=1.0))
    elif case == "ts hbm data":
        _keep(nisa.tensor_scalar(dst=y, data=out[r:r + h, :], op0=nl.add, operand0=1.0))
    elif case == "ts unwritten partitions":
        whole = nl.ndarray((128, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=whole[0:1, :], src=t[0:1, :])
        _keep(nisa.tensor_scalar(dst=y, data=whole[0:h, :], op0=nl.add, operand0=1.0))
    elif case == "ts named not a string":
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=1.0, name=3))
    elif case == "ts bitvec":
        i = nl.ndarray(t.shape, dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=i, src=t)
        _keep(nisa.tensor_scalar(dst=i, data=i, op0=nl.bitwise_and, operand0=3))
        nisa.tensor_copy(dst=y, src=i)
    elif case in ("ts offset views", "ts offset views bad start"):
        k = C // 2
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.multiply, operand0=0.0))
        _keep(nisa.tensor_scalar(dst=y[:, 0:k], data=t[:, C - k:C], op0=nl.add, operand0=col))
        a, b = (32, 0) if h >= 64 else (1, 0) if case.endswith("bad start") else (0, 0)
        if h > 1:
            _keep(nisa.tensor_scalar(dst=y[a:a + 32, :], data=t[b:b + 32, :], op0=nl.add,
                                     operand0=col[a:a + 32, :], op1=nl.subtract,
                                     operand1=col[b:b + 32, :]))
    elif case == "ts psum":
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.tensor_scalar(dst=p, data=t, op0=nl.multiply, operand0=col))
        _keep(nisa.tensor_scalar(dst=y, data=p, op0=nl.add, operand0=-1.0))
    # ---- tensor_tensor ----
    elif case == "tt plain":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.multiply))
    elif case == "tt positional named":
        _keep(nisa.tensor_tensor(y, t, g, nl.add, nisa.engine.unknown, "tt"))
    elif case == "tt in place":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.multiply))
        _keep(nisa.tensor_tensor(dst=y, data1=y, data2=t, op=np.maximum))
    elif case == "tt psum":
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p, src=t)
        _keep(nisa.tensor_tensor(dst=y, data1=p, data2=g, op=nl.subtract))
        _keep(nisa.tensor_tensor(dst=p, data1=y, data2=g, op=nl.subtract))
        nisa.tensor_copy(dst=y, src=p)
    elif case == "tt both psum":
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p, src=t)
        _keep(nisa.tensor_tensor(dst=y, data1=p, data2=p, op=nl.add))
    elif case == "tt ints":
        i = nl.ndarray(t.shape, dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=i, src=t)
        _keep(nisa.tensor_tensor(dst=i, data1=i, data2=i, op=nl.add))
        _keep(nisa.tensor_tensor(dst=i, data1=i, data2=i, op=nl.multiply, engine=nisa.vector_engine))
        _keep(nisa.tensor_tensor(dst=y, data1=i, data2=i, op=nl.add))
    elif case in ("tt offset views", "tt offset views bad start"):
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.add))
        a, b = (32, 0) if h >= 64 else (1, 0) if case.endswith("bad start") else (0, 0)
        if h > 1:
            _keep(nisa.tensor_tensor(dst=y[a:a + 32, 1:C], data1=t[b:b + 32, 0:C - 1],
                                     data2=g[a:a + 32, 1:C], op=nl.multiply))
    elif case == "tt power":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.power))
    elif case == "tt power on the vector engine":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.power, engine=nisa.vector_engine))
    elif case == "tt bitvec":
        i = nl.ndarray(t.shape, dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=i, src=t)
        _keep(nisa.tensor_tensor(dst=i, data1=i, data2=i, op=nl.bitwise_and))
        nisa.tensor_copy(dst=y, src=i)
    elif case == "tt gpsimd":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.add, engine=nisa.gpsimd_engine))
    elif case == "tt bf16":
        b = nl.ndarray(t.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.tensor_tensor(dst=b, data1=t, data2=g, op=nl.subtract))
        _keep(nisa.tensor_tensor(dst=y, data1=b, data2=t, op=nl.divide))
    elif case == "tt shape mismatch":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g[:, 0:C - 1], op=nl.add))
    elif case == "tt reshaped":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g.reshape((h, 1, C)), op=nl.add))
    elif case == "tt not an op":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op="add"))
    elif case == "tt op hash raises":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=HashRaises()))
    elif case == "tt wrong keyword":
        _keep(nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.add, dtype=nl.float32))
    # ---- activation ----
    elif case == "act exp":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t))
    elif case == "act scale bias tile":
        _keep(nisa.activation(dst=y, op=nl.copy, data=t, bias=col, scale=0.5))
    elif case == "act scale int":
        _keep(nisa.activation(dst=y, op=nl.tanh, data=t, scale=2))
    elif case == "act scale tile":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, scale=col))
    elif case == "act bias and scale tiles":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=col, scale=col))
    elif case == "act number bias":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=1.0))
    elif case == "act zero bias":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=0.0))
    elif case == "act int bias":
        i = nl.ndarray(col.shape, dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=i, src=col)
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=i))
    elif case == "act bf16 bias":
        b = nl.ndarray(col.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_copy(dst=b, src=col)
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=b))
    elif case == "act psum bias":
        p = nl.ndarray(col.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p, src=col)
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, bias=p, scale=p))
    elif case in ("act psum dst offset", "act psum dst offset bad start"):
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.activation(dst=p, op=nl.exp, data=t, bias=col))
        _keep(nisa.tensor_copy(dst=y, src=p))
        a, b = (32, 0) if h >= 64 else (1, 0) if case.endswith("bad start") else (0, 0)
        if h > 1:
            _keep(nisa.activation(dst=y[a:a + 32, :], op=nl.copy, data=p[b:b + 32, :],
                                  scale=col[a:a + 32, :]))
    elif case == "act prelu":
        _keep(nisa.activation(dst=y, op=nl.prelu, data=t))
    elif case == "act sqrt in place":
        _keep(nisa.activation(dst=col, op=nl.sqrt, data=col))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.divide, operand0=col))
    elif case == "act reduce":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=col,
                              reduce_cmd=nisa.reduce_cmd.reset_reduce))
    elif case == "act reduce_op alone":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, reduce_op=nl.maximum))
    elif case == "act positional named":
        _keep(nisa.activation(y, nl.tanh, t, None, 1.0, None, None, nisa.reduce_cmd.idle, "a"))
    elif case == "act bf16 dst":
        b = nl.ndarray(t.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.activation(dst=b, op=nl.exp, data=t, scale=col))
        _keep(nisa.activation(dst=y, op=nl.copy, data=b))
    elif case == "act wrong keyword":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, mask=None))
    elif case == "act not a function":
        _keep(nisa.activation(dst=y, op=3, data=t))
    elif case == "act function hash raises":
        _keep(nisa.activation(dst=y, op=HashRaises(), data=t))
    elif case == "act column of other partitions":
        _keep(nisa.activation(dst=y, op=nl.exp, data=t, scale=g))
    # ---- activation_reduce ----
    elif case == "ar bias scale":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=col,
                                     bias=col, scale=0.25))
    elif case == "ar positional named":
        _keep(nisa.activation_reduce(y, nl.copy, t, np.add, col, None, col, "ar"))
    elif case == "ar maximum":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.maximum, reduce_res=col))
    elif case == "ar no reduce_op":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=None, reduce_res=col))
    elif case == "ar reduce_res in hbm":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add,
                                     reduce_res=out[r:r + h, 0:1]))
    elif case == "ar reduce_res too short":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add,
                                     reduce_res=col[0:h - 1, :] if h > 1 else 2.0))
    elif case == "ar missing":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add))
    # ---- tensor_reduce ----
    elif case == "tr plain":
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=t, axis=1))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.subtract, operand0=col))
    elif case == "tr keepdims negate":
        _keep(nisa.tensor_reduce(dst=col, op=np.maximum, data=t, axis=[-1], negate=True,
                                 keepdims=True))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr positional named":
        _keep(nisa.tensor_reduce(col, nl.minimum, t, (1,), False, False, "tr"))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr bf16 dst":
        b = nl.ndarray(col.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.tensor_reduce(dst=b, op=nl.add, data=t, axis=-1))
        _keep(nisa.tensor_copy(dst=col, src=b))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr psum data":
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=p, src=t)
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=p, axis=1))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr bitvec":
        i = nl.ndarray(t.shape, dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=i, src=t)
        c = nl.ndarray(col.shape, dtype=nl.int32, buffer=nl.sbuf)
        _keep(nisa.tensor_reduce(dst=c, op=nl.bitwise_or, data=i, axis=1))
        nisa.tensor_copy(dst=col, src=c)
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr 3d":
        if C % 2 == 0:
            _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=t.reshape((h, C // 2, 2)), axis=[1, 2]))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr dst reshaped":
        _keep(nisa.tensor_reduce(dst=col.reshape((h, 1, 1)), op=nl.add, data=t, axis=1))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr numpy axis":
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=t, axis=np.int64(1)))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "tr not a reduce op":
        _keep(nisa.tensor_reduce(dst=col, op=nl.divide, data=t, axis=1))
    elif case == "tr axis 0":
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=t, axis=0))
    elif case == "tr wrong dst":
        _keep(nisa.tensor_reduce(dst=y, op=nl.add, data=t, axis=1))
    elif case == "tr hbm data":
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=out[r:r + h, :], axis=1))
    elif case == "tr unwritten data":
        u = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.sbuf)
        _keep(nisa.tensor_reduce(dst=col, op=nl.add, data=u, axis=1))
    # ---- activation_reduce's reduce_res (after the cases above: their kernel lines unmoved) ----
    elif case == "ar 1d reduce_res":
        v = nl.ndarray((h,), dtype=nl.float32, buffer=nl.sbuf)
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=v))
        _keep(nisa.tensor_scalar(dst=y, data=t, op0=nl.add, operand0=col))
    elif case == "ar wide reduce_res":
        w = nl.ndarray((h, 2), dtype=nl.float32, buffer=nl.sbuf)
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=w))
    elif case == "ar psum reduce_res":
        p = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add,
                                     reduce_res=p if h == 128 else p[0:h, :]))
        nisa.tensor_copy(dst=col, src=p if h == 128 else p[0:h, :])
    elif case == "ar reduce_res in dst":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add,
                                     reduce_res=y[:, 0:1]))
    elif case == "ar reduce_res offset":
        c2 = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add,
                                     reduce_res=c2[0:h, 1:2]))
    elif case == "ar int reduce_res":
        i = nl.ndarray((h, 1), dtype=nl.int32, buffer=nl.sbuf)
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=i))
    elif case == "ar twice":
        _keep(nisa.activation_reduce(dst=y, op=nl.exp, data=t, reduce_op=np.add, reduce_res=col))
        _keep(nisa.activation_reduce(dst=y, op=nl.copy, data=y, reduce_op=nl.add, reduce_res=col))
    # ---- tensor_copy (after the cases above: their kernel lines unmoved) ----
    elif case == "tc plain":
        _keep(nisa.tensor_copy(dst=y, src=t))
    elif case == "tc psum":
        p = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        _keep(nisa.tensor_copy(dst=p, src=t))
        _keep(nisa.tensor_copy(dst=y, src=p))
    elif case == "tc positional named":
        _keep(nisa.tensor_copy(y, t, nisa.engine.unknown, "tc"))
    elif case == "tc bf16 dst":
        b = nl.ndarray(t.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        _keep(nisa.tensor_copy(dst=b, src=t))
        _keep(nisa.tensor_copy(dst=y, src=b))
    elif case in ("tc offset views", "tc offset views bad start"):
        k = C // 2
        _keep(nisa.tensor_copy(dst=y, src=t))
        _keep(nisa.tensor_copy(dst=y[:, 0:k], src=t[:, C - k:C]))
        a, b = (32, 0) if h >= 64 else (1, 0) if case.endswith("bad start") else (0, 0)
        if h > 1:
            _keep(nisa.tensor_copy(dst=y[a:a + 32, 1:C], src=t[b:b + 32, 0:C - 1]))
    elif case == "tc engine vector":
        _keep(nisa.tensor_copy(dst=y, src=t, engine=nisa.engine.vector))
    elif case == "tc engine scalar":
        _keep(nisa.tensor_copy(dst=y, src=t, engine=nisa.engine.scalar))
    elif case == "tc wrong shape":
        _keep(nisa.tensor_copy(dst=y, src=g[:, 0:C - 1]))
    elif case == "tc hbm src":
        _keep(nisa.tensor_copy(dst=y, src=out[r:r + h, :]))
    elif case == "tc unwritten src":
        u = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.sbuf)
        _keep(nisa.tensor_copy(dst=y, src=u))
    elif case == "tc wrong keyword":
        _keep(nisa.tensor_copy(dst=y, src=t, mask=None))
    elif case == "tc named not a string":
        _keep(nisa.tensor_copy(dst=y, src=t, name=3))
    elif case != "plain":
        raise AssertionError(case)


TS_CASES = ["ts number", "ts positional two ops", "ts column", "ts two columns",
            "ts column then number", "ts number then column", "ts operand0 none", "ts rsqrt",
            "ts engine vector named", "ts engine scalar", "ts bf16 dst", "ts in place",
            "ts numpy scalar", "ts reverse not a bool", "ts huge int", "ts operand1 without op1",
            "ts op1 without operand1", "ts wrong keyword", "ts twice", "ts missing",
            "ts wrong shape", "ts reshaped data", "ts column of other partitions",
            "ts column not [P, 1]", "ts not an op", "ts op hash raises", "ts hbm data",
            "ts unwritten partitions", "ts named not a string", "ts bitvec", "ts offset views",
            "ts psum", "ts offset views bad start"]
TT_CASES = ["tt plain", "tt positional named", "tt in place", "tt psum", "tt both psum", "tt ints",
            "tt power", "tt power on the vector engine", "tt bitvec", "tt gpsimd", "tt bf16",
            "tt shape mismatch", "tt reshaped", "tt not an op", "tt op hash raises",
            "tt wrong keyword", "tt offset views", "tt offset views bad start"]
ACT_CASES = ["act exp", "act scale bias tile", "act scale int", "act scale tile",
             "act bias and scale tiles", "act number bias", "act zero bias", "act int bias",
             "act bf16 bias", "act psum bias", "act prelu", "act sqrt in place", "act reduce",
             "act reduce_op alone", "act positional named", "act bf16 dst", "act wrong keyword",
             "act not a function", "act function hash raises", "act column of other partitions",
             "act psum dst offset", "act psum dst offset bad start"]
TR_CASES = ["tr plain", "tr keepdims negate", "tr positional named", "tr bf16 dst", "tr psum data",
            "tr bitvec", "tr 3d", "tr dst reshaped", "tr numpy axis", "tr not a reduce op",
            "tr axis 0", "tr wrong dst", "tr hbm data", "tr unwritten data"]
AR_CASES = ["ar bias scale", "ar positional named", "ar maximum", "ar no reduce_op",
            "ar reduce_res in hbm", "ar reduce_res too short", "ar missing", "ar 1d reduce_res",
            "ar wide reduce_res", "ar psum reduce_res", "ar reduce_res in dst",
            "ar reduce_res offset", "ar int reduce_res", "ar twice"]
TC_CASES = ["tc plain", "tc psum", "tc positional named", "tc bf16 dst", "tc offset views",
            "tc offset views bad start", "tc engine vector", "tc engine scalar", "tc wrong shape",
            "tc hbm src", "tc unwritten src", "tc wrong keyword", "tc named not a string"]
SHAPES = [(300, 64, np.float32), (129, 8, "bfloat16"), (5, 33, np.float32)]


def _inputs(rows, cols, dtype):
    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    return (rng.standard_normal((rows, cols)).astype(dtype),
            rng.standard_normal((cols,)).astype(np.float32))


@pytest.mark.parametrize("case", ["plain"] + TS_CASES + TT_CASES + ACT_CASES + AR_CASES + TR_CASES +
                         TC_CASES)
@pytest.mark.parametrize("rows, cols, dtype", SHAPES)
def test_elementwise_cases_trace_alike(monkeypatch, case, rows, cols, dtype):
    _same_with_c_and_python(monkeypatch, elementwise, *_inputs(rows, cols, dtype), case)


# The cases whose calls of the four are all taken by the C paths, and cases with one the C path
# leaves to the definition (in each row block).
TAKEN = ["plain", "ts number", "ts positional two ops", "ts column", "ts two columns",
         "ts column then number", "ts operand0 none", "ts engine vector named", "ts bf16 dst",
         "ts in place", "tt plain", "tt positional named", "tt in place", "tt psum", "tt bf16",
         "tt power on the vector engine", "act exp", "act scale bias tile", "act scale int",
         "act scale tile", "act bias and scale tiles", "act bf16 bias", "act psum bias",
         "act reduce_op alone", "act positional named", "act bf16 dst", "act sqrt in place",
         "ar bias scale", "ar positional named", "tr plain", "tr keepdims negate",
         "tr positional named", "tr bf16 dst", "tr psum data", "ts offset views", "ts psum",
         "tt offset views", "act psum dst offset", "tc plain", "tc psum", "tc positional named",
         "tc bf16 dst", "tc offset views"]
DECLINED = {"ts number then column": "tensor_scalar", "ts rsqrt": "tensor_scalar",
            "ts engine scalar": "tensor_scalar", "ts numpy scalar": "tensor_scalar",
            "ts reverse not a bool": "tensor_scalar", "ts bitvec": "tensor_scalar",
            "tt ints": "tensor_tensor", "tt power": "tensor_tensor", "tt bitvec": "tensor_tensor",
            "tt gpsimd": "tensor_tensor", "tt reshaped": "tensor_tensor",
            "act number bias": "activation", "act zero bias": "activation",
            "act reduce": "activation", "tr bitvec": "tensor_reduce", "tr 3d": "tensor_reduce",
            "tr dst reshaped": "tensor_reduce", "tr numpy axis": "tensor_reduce",
            "tc engine vector": "tensor_copy", "tc engine scalar": "tensor_copy"}


@pytest.mark.parametrize("case", TAKEN)
def test_the_c_paths_take_the_common_calls(monkeypatch, case):
    x, g = _inputs(300, 64, np.float32)
    got, ran = _same_with_c_and_python(monkeypatch, elementwise, x, g, case)
    assert got.startswith("{"), got
    assert ran == []


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_the_c_paths_leave_the_rest(monkeypatch, case):
    x, g = _inputs(300, 64, np.float32)
    got, ran = _same_with_c_and_python(monkeypatch, elementwise, x, g, case)
    assert got.startswith("{") or got.startswith("NKIError"), got
    assert ran and set(ran) == {DECLINED[case]}, ran


def test_the_errors_are_the_definitions():
    x, g = _inputs(300, 64, np.float32)
    for case, text in [("ts operand1 without op1", "operand1 given without op1"),
                       ("ts op1 without operand1", "op1 needs operand1"),
                       ("ts wrong keyword", "unexpected keyword argument 'mask'"),
                       ("ts twice", "multiple values for argument 'data'"),
                       ("ts wrong shape", "operands pair element by element"),
                       ("ts column of other partitions", "must be a number or a [128, 1] tile"),
                       ("ts not an op", "is not an ALU operation"),
                       ("ts unwritten partitions", "which nothing wrote"),
                       ("ts named not a string", "name must be a string"),
                       ("tt both psum", "nisa.tensor_tensor"),
                       ("tt not an op", "is not an ALU operation"),
                       ("ts op hash raises", "refuses to be hashed"),
                       ("tt op hash raises", "refuses to be hashed"),
                       ("act function hash raises", "refuses to be hashed"),
                       ("act prelu", "relu_param"),
                       ("act int bias", "bias must be float32, float16 or bfloat16"),
                       ("ar maximum", "reduce_op"),
                       ("ar no reduce_op", "reduce_op=nl.add"),
                       ("ar reduce_res in hbm", "reduce_res"),
                       ("ar missing", "reduce_res"),
                       ("tr not a reduce op", "nisa.tensor_reduce"),
                       ("tr axis 0", "partition dimension"),
                       ("tr wrong dst", "dst has shape")]:
        got, _ = _outcome(elementwise, x, g, case)
        assert text in got, (case, got)


def test_the_c_paths_decline_outside_a_trace():
    """Without a tracer each call is its definition's (which refuses it)."""
    for call in CALLS:
        assert call.fast(None, None, None, None, None) is NotImplemented


def test_read_accumulator_and_the_reduce_rule_in_c(monkeypatch):
    """activation_reduce's read_accumulator of a plain [P, 1] reduce_res is recorded in C, and its
    reduce rule, once passed for nl.add on an arch, is not asked again; the Python functions run
    for anything else (and with the C paths off, every time)."""
    from neuronxsim.nki import instructions
    x, g = _inputs(300, 64, np.float32)
    for case in ("plain", "ar wide reduce_res"):  # (the operators' memos filled: the C paths take them)
        _outcome(elementwise, x, g, case)
    calls = []
    for name in ("read_accumulator", "refuse_illegal_reduce"):
        fn = getattr(instructions, name)
        monkeypatch.setattr(instructions, name,
                            lambda *a, _fn=fn, _name=name: (calls.append(_name), _fn(*a))[1])
    instructions._REDUCE_ADD_ARCHS.clear()  # (a memo: emptied, it fills again)
    assert _outcome(elementwise, x, g, "plain")[0].startswith("{")
    assert calls == ["refuse_illegal_reduce"]  # (300 rows: three blocks)
    calls.clear()
    got, _ = _outcome(elementwise, x, g, "ar wide reduce_res")
    assert got.startswith("NKIError") and "reduce_res" in got, got
    assert calls == ["read_accumulator"]
    calls.clear()
    with monkeypatch.context() as m:
        for call in CALLS:
            m.setattr(call, "fast", None)
        _outcome(elementwise, x, g, "plain")
    assert calls == ["refuse_illegal_reduce", "read_accumulator"] * 3
