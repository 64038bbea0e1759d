"""Index expressions, masks and subscripts: how NKI kernels address parts of tensors.

An :class:`IndexExpr` is an affine expression over a grid of index variables, the value of
``nl.arange(...)``, ``nl.mgrid[...]`` and their integer combinations::

    value(i) = const + sum_d coefs[d] * i[d]        for 0 <= i[d] < shape[d]

Grids broadcast like NumPy arrays (``nl.arange(128)[:, None] + nl.arange(512)[None, :]`` spans a
128 x 512 grid). Comparing expressions gives an :class:`IndexPredicate`; ``&`` joins predicates into
a :class:`Mask`, which restricts an instruction to a box of its iteration space.

:func:`resolve_subscript` turns ``tensor[...]`` into a strided view: a start offset and one
``(stride, size)`` per result dimension, in elements of the tensor. Range checks of the indices are
deferred (as :class:`BoundCheck`) to the instruction that uses the view, because that
instruction's mask may exclude the out-of-range part (``nl.load(a[i * 128 + ip, j], mask=...)``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from neuronxsim.starfish.lib import _core

from .errors import NKIError, caller_location


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise NKIError(f"index grids of shapes {a} and {b} do not broadcast", caller_location())
        out.append(x if y == 1 else y)
    return tuple(out)


class IndexExpr:
    """An affine expression of grid indices (see the module docstring)."""

    __slots__ = ("shape", "const", "coefs")

    def __init__(self, shape: tuple, const: int, coefs: tuple):
        self.shape = shape
        self.const = const
        self.coefs = coefs

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def broadcast_to(self, shape: tuple) -> "IndexExpr":
        """This expression on the grid ``shape`` (which it must broadcast to)."""
        pad = len(shape) - len(self.shape)
        own_shape = (1,) * pad + self.shape
        coefs = (0,) * pad + self.coefs
        # A dimension of size 1 stretched over a longer one holds index 0 everywhere.
        coefs = tuple(0 if s == 1 else c for s, c in zip(own_shape, coefs))
        return IndexExpr(tuple(shape), self.const, coefs)

    def value_range(self) -> tuple[int, int]:
        """The smallest and largest value over the grid."""
        lo = hi = self.const
        for c, n in zip(self.coefs, self.shape):
            span = c * (n - 1)
            if span < 0:
                lo += span
            else:
                hi += span
        return lo, hi

    # ---- arithmetic: integers and other expressions, staying affine ----
    def _combine(self, other, sign: int) -> "IndexExpr":
        if other.__class__ is int:  # the usual case: a loop index times a tile size
            return IndexExpr(self.shape, self.const + sign * other, self.coefs)
        if isinstance(other, IndexExpr):
            shape = _broadcast_shapes(self.shape, other.shape)
            a, b = self.broadcast_to(shape), other.broadcast_to(shape)
            return IndexExpr(shape, a.const + sign * b.const,
                             tuple(x + sign * y for x, y in zip(a.coefs, b.coefs)))
        k = _as_int(other, "an index expression")
        return IndexExpr(self.shape, self.const + sign * k, self.coefs)

    def __add__(self, other):
        c = other.__class__
        if c is int:  # (_combine's first case, without the extra call)
            return _expr(self.shape, self.const + other, self.coefs)
        if c is LoopIndex:  # (_combine's last case: `t * 128 + ip`, as the integer it is)
            return _expr(self.shape, self.const + _int_index(other), self.coefs)
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        c = other.__class__
        if c is int:
            return _expr(self.shape, self.const - other, self.coefs)
        if c is LoopIndex:
            return _expr(self.shape, self.const - _int_index(other), self.coefs)
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __mul__(self, other):
        if isinstance(other, IndexExpr):
            raise NKIError("the product of two index expressions is not affine", caller_location())
        k = _as_int(other, "an index expression")
        return IndexExpr(self.shape, self.const * k, tuple(c * k for c in self.coefs))

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __pos__(self):
        return self

    def _not_affine(self, *_):
        raise NKIError("index expressions support +, - and multiplication by integers only "
                       "(the hardware's access patterns are affine)", caller_location())

    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = _not_affine

    def __getitem__(self, key) -> "IndexExpr":
        """Reshaping by ``[:, None]`` / ``[None, :]``: insert grid dimensions of size 1."""
        if key.__class__ is tuple and len(key) == 2 and len(self.shape) == 1:
            a, b = key  # the usual: a 1-D arange made a partition or a free index
            if a is None and b.__class__ is slice and b == _WHOLE:
                return _expr((1, self.shape[0]), self.const, (0, self.coefs[0]))
            if b is None and a.__class__ is slice and a == _WHOLE:
                return _expr((self.shape[0], 1), self.const, (self.coefs[0], 0))
        if not isinstance(key, tuple):
            key = (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise NKIError("an index can have only one '...'", caller_location())
        n_slices = sum(isinstance(k, slice) for k in key)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (self.ndim - n_slices) + key[i + 1:]
            n_slices = self.ndim
        if n_slices != self.ndim or any(not (k is None or k == slice(None)) for k in key):
            raise NKIError(f"an index expression of {self.ndim} dimension(s) can only be "
                           "reshaped with ':' and 'None' (e.g. nl.arange(128)[:, None])",
                           caller_location())
        shape, coefs, dims = [], [], iter(zip(self.shape, self.coefs))
        for k in key:
            s, c = (1, 0) if k is None else next(dims)
            shape.append(s)
            coefs.append(c)
        return IndexExpr(tuple(shape), self.const, tuple(coefs))

    # ---- comparisons give predicates (masks) ----
    def _compare(self, other, op: str) -> "IndexPredicate":
        if other.__class__ is int:  # (self - other, without the extra call)
            return _predicate(_expr(self.shape, self.const - other, self.coefs), op)
        return IndexPredicate(self - other, op)

    def __lt__(self, other):
        if other.__class__ is int:  # (_compare's first case, without the extra call: `< rows`)
            return _predicate(_expr(self.shape, self.const - other, self.coefs), "<")
        return self._compare(other, "<")

    def __le__(self, other):
        return self._compare(other, "<=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __eq__(self, other):
        return self._compare(other, "==")

    def __ne__(self, other):
        return self._compare(other, "!=")

    __hash__ = object.__hash__

    def __index__(self):
        raise NKIError("an index expression (nl.arange) is not a Python integer", caller_location())

    def __repr__(self):
        terms = [str(self.const)] if self.const else []
        terms += [f"{c}*i{d}" for d, c in enumerate(self.coefs) if c]
        return f"IndexExpr({' + '.join(terms) or '0'} over {self.shape})"


_WHOLE = slice(None)


#: The index of an ``nl.affine_range`` / ``nl.sequential_range`` iteration: an integer (the
#: trace runs the body once per iteration) that, like NKI's symbolic loop variable, keeps its
#: axis when it subscripts a tile's free dimension: ``t[:, i]`` of a [P, F] tile is the [P, 1]
#: column ``i`` (a plain integer drops the axis). Sums, differences and integer multiples of
#: loop indices are loop indices (``i0 * 4 + i1``); everything else is a plain integer. An int
#: subclass in C (``cpp/python/trace_loop_index.cpp``): its operators run a few times per traced
#: instruction, and a Python operator method would cost a Python frame each time.
LoopIndex = _core.nki.LoopIndex


def plain_subscript(key: tuple, on_chip: bool) -> tuple | None:
    """``key`` with its loop indices made plain integers, slices of them plain slices, and a
    loop index subscripting a tile's free dimension a slice of one (NKI keeps that axis; in
    subscripts with index expressions it acts as the integer it is); None when ``key`` holds no
    loop index (one pass, no generator: it runs for most subscripts inside traced loops)."""
    out = None
    keep = on_chip
    for axis, k in enumerate(key):
        c = k.__class__
        if c is LoopIndex:
            v = _int_index(k)
            k = slice(v, v + 1) if axis else v  # (made an integer below unless `keep` holds)
        elif c is slice and (k.start.__class__ is LoopIndex or k.stop.__class__ is LoopIndex or
                             k.step.__class__ is LoopIndex):
            a, b, step = k.start, k.stop, k.step
            k = slice(None if a is None else _int_index(a), None if b is None else _int_index(b),
                      None if step is None else _int_index(step))
        else:
            if c is IndexExpr:
                keep = False
            if out is not None:
                out.append(k)
            continue
        if out is None:
            out = list(key[:axis])
        out.append(k)
    if out is None:
        return None
    if not keep:  # an index expression in the key (or HBM): loop indices act as integers
        for axis, k in enumerate(key):
            if k.__class__ is LoopIndex:
                out[axis] = _int_index(k)
    return tuple(out)


_int_index = int.__index__


def _as_int(value, what: str) -> int:
    if isinstance(value, bool):
        raise NKIError(f"{what} cannot be combined with a boolean", caller_location())
    try:
        return operator.index(value)
    except TypeError:
        raise NKIError(f"{what} can only be combined with integers and other index expressions, "
                       f"not {type(value).__name__}", caller_location()) from None


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "==": operator.eq, "!=": operator.ne}


class IndexPredicate:
    """``expr OP 0``: one comparison of index expressions."""

    __slots__ = ("expr", "op", "box_cache")

    def __init__(self, expr: IndexExpr, op: str):
        self.expr = expr
        self.op = op
        self.box_cache = None  # see mask_box

    def __and__(self, other):
        return Mask((self,)) & other

    __rand__ = __and__

    # (a comparison of loop indices alone is a Python bool: see mask_box)

    def __or__(self, other):
        raise NKIError("masks are conjunctions: combine predicates with '&' (for other "
                       "predicates use nl.where or nisa.affine_select)", caller_location())

    __ror__ = __or__

    def __bool__(self):
        raise NKIError("a comparison of index expressions is a mask, not a Python bool",
                       caller_location())

    def __repr__(self):
        return f"({self.expr!r} {self.op} 0)"


class Mask:
    """A conjunction of :class:`IndexPredicate`."""

    __slots__ = ("predicates", "box_cache")

    def __init__(self, predicates: tuple):
        self.predicates = predicates
        self.box_cache = None  # see mask_box

    def __and__(self, other):
        if isinstance(other, IndexPredicate):
            return Mask(self.predicates + (other,))
        if isinstance(other, Mask):
            return Mask(self.predicates + other.predicates)
        if other is True or other is False or isinstance(other, np.bool_):
            # a predicate of loop indices alone, known by now: it keeps this mask or nothing
            return self if other else Mask(self.predicates + (_NOTHING,))
        raise NKIError(f"cannot combine a mask with {type(other).__name__}", caller_location())

    __rand__ = __and__
    __or__ = IndexPredicate.__or__
    __bool__ = IndexPredicate.__bool__


#: ``_expr(shape, const, coefs)`` is ``IndexExpr(shape, const, coefs)`` and ``_predicate(expr,
#: op)`` is ``IndexPredicate(expr, op)`` (its box_cache None), made without running ``__init__``
#: (``cpp/python/trace_slotted.cpp``): a kernel's loop body makes a few of each per traced
#: instruction (``t * 128 + ip``, ``mask=(j * 512 + i_f < n)``), and the ``__init__`` frame was
#: most of their cost. (The classes' ``__init__`` stay what other callers use; both set exactly
#: the slots, in __slots__ order.)
_expr = functools.partial(_core.nki.new_slotted, IndexExpr)
_predicate = functools.partial(_core.nki.new_slotted, IndexPredicate)

_NOTHING = IndexPredicate(IndexExpr((), 0, ()), "<")  # 0 < 0: keeps nothing

# `e + k`, `k + e` and `e < k` of an int (or loop index, for +) in C
# (cpp/python/trace_index_expr_ops.cpp): what __add__ and __lt__ above make of them, without their
# frames; every other operand goes to those definitions.
_OPERATOR_DEFINITIONS = {"__add__": IndexExpr.__add__, "__lt__": IndexExpr.__lt__}
_core.nki.configure_index_expr_ops(IndexExpr, IndexPredicate, LoopIndex, IndexExpr.__add__,
                                   IndexExpr.__lt__)
for _name, _method in _core.nki.index_expr_methods().items():
    setattr(IndexExpr, _name, _method)
del _name, _method


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


_FULL_BOXES: dict = {}


def full_box(shape: tuple) -> tuple:
    """The whole iteration space as a box (one shared, immutable object per shape, so that
    ``box is full_box(shape)`` tells a box that cuts nothing)."""
    box = _FULL_BOXES.get(shape)
    if box is None:
        box = _FULL_BOXES[shape] = tuple((0, n) for n in shape)
    return box


def mask_box(mask, shape: tuple) -> tuple:
    """The box ``((lo, hi), ...)`` of the iteration space ``shape`` that ``mask`` keeps
    (:func:`full_box` when it keeps everything).

    Each predicate must depend on at most one grid dimension of ``shape`` (aligned from the
    right, as NumPy broadcasting aligns), so that the kept elements form a box an access pattern
    can describe; triangles (``i_p >= i_f``) are nisa.affine_select's job.

    A kernel usually applies one mask to several instructions over one shape (the load, compute
    and store of a partial tile): the mask remembers its last box. And it builds its masks anew
    on every loop iteration (``mask=(j * 512 + i_f < n)``), from a few distinct values: the box
    of a one-predicate mask is also remembered by those values (see _PREDICATE_BOXES).

    A mask of loop indices and program ids alone is a Python bool by the time it arrives (the
    trace runs them as integers): True keeps everything, False nothing.
    """
    if isinstance(mask, IndexPredicate):
        predicates = (mask,)
    elif isinstance(mask, Mask):
        predicates = mask.predicates
    elif mask is True or mask is False or isinstance(mask, np.bool_):
        # a predicate of loop indices and program ids alone (`mask=(i * 128 < n)`): the trace
        # knows their values, so it keeps all or nothing
        return full_box(shape) if mask else tuple((0, 0) for _ in shape)
    else:
        raise NKIError(f"mask must be a comparison of index expressions (e.g. "
                       f"i_p < n), not {type(mask).__name__}", caller_location())
    cached = mask.box_cache
    if cached is not None and cached[0] == shape:
        return cached[1]
    if len(predicates) == 1:
        expr = predicates[0].expr
        key = (predicates[0].op, expr.const, expr.coefs, expr.shape, shape)
        box = _PREDICATE_BOXES.get(key)
        if box is None:
            box = _predicates_box(predicates, shape)  # (raises for a mask it cannot take)
            if len(_PREDICATE_BOXES) >= _MAX_PREDICATE_BOXES:
                _PREDICATE_BOXES.clear()
            _PREDICATE_BOXES[key] = box
    else:
        box = _predicates_box(predicates, shape)
    mask.box_cache = (shape, box)
    return box


#: (op, const, coefs, grid shape, iteration space) of a one-predicate mask -> its box: a
#: function of these values alone (expressions are immutable, boxes are tuples, and a full box
#: is the one object full_box keeps for its shape). Bounded, as kernels traced in one process
#: can keep bringing new values.
_PREDICATE_BOXES: dict = {}
_MAX_PREDICATE_BOXES = 4096

# The boxes a mask remembers (its box_cache; _PREDICATE_BOXES) are read in C through a FastCall
# (cpp/python/trace_mask_box.cpp, cpp/python/trace_fast_call.cpp): anything else, and every
# error, is the definition's above.
_core.nki.configure_mask_box(IndexPredicate, Mask, _FULL_BOXES, _PREDICATE_BOXES)
mask_box = _core.nki.FastCall(mask_box, _core.nki.mask_box_fast())


def _keeps_all_or_none(pred) -> bool | None:
    """Whether ``pred`` (an expression of several grid dimensions compared with 0) holds on
    every point of its grid (True), on none (False), or on some (None). A bound check over a
    flattened offset (``mask=(j * 1024 + 512 * i_p + i_f < n)``) holds everywhere for whole
    tiles: its box is then the whole space, or none of it."""
    expr = pred.expr
    lo = hi = expr.const
    for c, n in zip(expr.coefs, expr.shape):
        span = c * (n - 1)
        lo, hi = lo + min(0, span), hi + max(0, span)
    always, never = {"<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0),
                     ">=": (lo >= 0, hi < 0), "==": (lo == hi == 0, hi < 0 or lo > 0)
                     }.get(pred.op, (False, False))
    return True if always else False if never else None


def _predicates_box(predicates: tuple, shape: tuple) -> tuple:
    """:func:`mask_box` of a conjunction, computed."""
    full = full_box(shape)
    box = None  # a list once a predicate cuts something
    rank = len(shape)
    related = []  # the predicates relating several dimensions that cut the space
    for pred in predicates:
        expr = pred.expr
        eshape, coefs = expr.shape, expr.coefs
        pad = rank - len(eshape)
        if pad < 0:
            raise NKIError(f"mask over a {expr.ndim}-dimensional grid does not fit a "
                           f"{rank}-dimensional tile", caller_location())
        # The grid dimension the expression varies along, aligned with the tile's from the
        # right (as IndexExpr.broadcast_to aligns them; size-1 dimensions hold index 0).
        dim = a = -1
        for d in range(len(eshape)):
            if coefs[d] and eshape[d] != 1:
                if dim >= 0:
                    dim = -2  # (several dimensions)
                    break
                dim, a = pad + d, coefs[d]
        if dim == -2:
            keeps = _keeps_all_or_none(pred)
            if keeps is None:
                related.append(pred)
            elif not keeps:
                box = [(lo, lo) for lo, _ in (box or full)]
            continue
        if dim < 0:
            a = 0
        for ca, cb in _bounds(pred.op, a, -a, expr.const):
            if ca == 0:
                if not cb < 0:
                    box = [(lo, lo) for lo, _ in (box or full)]
                continue
            lo, hi = (box or full)[dim]
            if ca > 0:  # i < -cb / ca
                new = (lo, min(hi, _ceil_div(-cb, ca)))
            else:  # i > -cb / ca
                new = (max(lo, (-cb) // ca + 1), hi)
            if new != (lo, hi):
                if box is None:
                    box = list(full)
                box[dim] = new
    if box is None and not related:
        return full  # the usual case: the mask keeps everything
    box = tuple([(lo, max(lo, hi)) for lo, hi in (box or full)])
    if related:
        return _related_pieces(related, box, shape)
    return full if box == full else box


def _bounds(op: str, a, neg_a, b: int) -> tuple:
    """The comparison ``a.i + b OP 0`` on integers as one or two bounds ``(coefficients,
    constant)``, each meaning ``a.i + b < 0`` (``neg_a``: the coefficients negated)."""
    if op == "<":
        return ((a, b),)
    if op == "<=":
        return ((a, b - 1),)
    if op == ">":
        return ((neg_a, -b),)
    if op == ">=":
        return ((neg_a, -b - 1),)
    if op == "==":
        return ((a, b - 1), (neg_a, -b - 1))
    raise NKIError(f"mask comparison '{op}' does not describe a range", caller_location())


class BoxPieces:
    """What :func:`mask_box` answers for a mask that keeps a region no single box describes but
    a few disjoint boxes do: a bound on a flattened offset that cuts a tile inside a row
    (``mask=(j * 65536 + 512 * i_p + i_f < n)``, NKI 2.2x's tutorial tensor addition keeps
    whole rows and the first columns of the next). The access pattern of an instruction is the
    same in every partition, so such an instruction is one per piece (``boxes``, in order,
    none empty): the builders that record pieces say so (instructions.plan, record_lanewise,
    dma_general); anywhere else the pieces are refused as such masks were before, as a box is
    read (subscripted, iterated, measured)."""

    __slots__ = ("boxes", "pred")

    def __init__(self, boxes: tuple, pred):
        self.boxes = boxes
        self.pred = pred

    def refusal(self, loc) -> NKIError:
        return NKIError(f"mask {self.pred!r} keeps {len(self.boxes)} boxes of the tile (a bound "
                        "on a flattened offset that cuts a row): only element-wise instructions "
                        "and transfers take it, one instruction per box; this one takes a mask "
                        "that limits each dimension to a range", loc)

    def refuse(self, *_):
        raise self.refusal(caller_location())

    __getitem__ = __iter__ = __len__ = refuse

    def __repr__(self):
        return f"BoxPieces({self.boxes!r})"


def _related_pieces(related: list, box: tuple, shape: tuple):
    """The kept region of ``box`` (what the other predicates keep) and the predicates ``related``
    (each relating several dimensions) as a box, an empty box, or :class:`BoxPieces`."""
    pieces = [box]
    for pred in related:
        pieces = [cut for piece in pieces for part in _predicate_pieces(pred, shape)
                  if (cut := _intersect(piece, part)) is not None]
    if not pieces:
        return tuple((lo, lo) for lo, _ in box)
    if len(pieces) == 1:
        return full_box(shape) if pieces[0] == full_box(shape) else pieces[0]
    return BoxPieces(tuple(pieces), related[0] if len(related) == 1 else Mask(tuple(related)))


def _intersect(a: tuple, b: tuple) -> tuple | None:
    out = tuple((max(alo, blo), min(ahi, bhi)) for (alo, ahi), (blo, bhi) in zip(a, b))
    return None if any(lo >= hi for lo, hi in out) else out


def _predicate_pieces(pred, shape: tuple) -> list:
    """The disjoint boxes of ``shape`` where ``pred`` (relating several dimensions) holds.
    Every comparison is one or two bounds ``sum a_d * i_d < m`` on the grid's indices. Each is
    decomposed after ordering its dimensions by the size of their coefficients, with every
    negative coefficient's dimension counted from its end, as the digits of a number: that
    works when each coefficient exceeds everything the smaller ones can add (a flattened
    offset: ``512 * i_p + i_f``), keeping whole rows, then at most one row cut further, and so
    on (a box per dimension at most). Anything else (a triangle, ``i_p - i_f < 0``) is refused
    as before: nisa.affine_select's job."""
    expr = pred.expr
    rank = len(shape)
    pad = rank - len(expr.shape)
    a = [0] * rank
    for d, (c, n) in enumerate(zip(expr.coefs, expr.shape)):
        if n != 1:
            a[pad + d] = c
    pieces = [full_box(shape)]
    for coefs, const in _bounds(pred.op, a, [-c for c in a], expr.const):
        parts = _bound_pieces(coefs, const, shape)
        if parts is None:
            dims = [d for d in range(rank) if a[d]]
            raise NKIError(f"mask {pred!r} relates index dimensions {dims}: a mask must limit "
                           "each dimension to a range (use nisa.affine_select for triangular "
                           "masks)", caller_location())
        pieces = [cut for piece in pieces for part in parts
                  if (cut := _intersect(piece, part)) is not None]
    return pieces


def _bound_pieces(coefs: list, const: int, shape: tuple) -> list | None:
    """The boxes of ``shape`` where ``sum coefs[d] * i_d + const < 0``, or None when the bound
    is not one of a flattened offset (see :func:`_predicate_pieces`)."""
    # count the dimensions of negative coefficients from their end: a * i = a * (n - 1) - a * i'
    flipped = [c < 0 for c in coefs]
    m = -const - sum(c * (n - 1) for c, n, f in zip(coefs, shape, flipped) if f)
    weights = [abs(c) for c in coefs]
    order = sorted((d for d in range(len(shape)) if weights[d]), key=lambda d: -weights[d])
    fixed = list(full_box(shape))  # the digits chosen so far, as one-index ranges
    pieces = []
    lead = 0  # the rows of the leading digit kept whole
    for k, d in enumerate(order):
        if m <= 0:
            break
        rest = sum(weights[e] * (shape[e] - 1) for e in order[k + 1:])
        if weights[d] <= rest:
            return None  # two rows of this digit could both be cut: not a flattened offset
        whole = min(shape[d], max(0, _ceil_div(m - rest, weights[d])))  # rows kept whole
        if k == 0:
            lead = whole
        if whole:
            pieces.append(tuple(fixed[:d]) + ((0, whole),) + tuple(fixed[d + 1:]))
        if whole == shape[d]:
            break
        fixed[d] = (whole, whole + 1)  # the row cut by the smaller digits
        m -= weights[d] * whole
    # back to the indices of the flipped dimensions
    pieces = [tuple((n - hi, n - lo) if f else (lo, hi) for (lo, hi), n, f in
                    zip(p, shape, flipped)) for p in pieces]
    if order and order[0] == 0 and not flipped[0] and len(pieces) > 1 and lead > 0:
        # Whole partitions [0, w), then partition w cut further: the pieces of that partition
        # would start at partition w, where an engine's instruction may not (the start-partition
        # rule). The same elements as pieces that all start at partition 0: the cut of
        # partition w over partitions [0, w + 1), and the rest of the free elements over [0, w).
        w = lead
        free = [0] + coefs[1:]
        rest = _bound_pieces([-c for c in free], -const - coefs[0] * w - 1, shape)
        return [((0, w + 1),) + p[1:] for p in pieces[1:]] + \
               [((0, w),) + p[1:] for p in rest]
    return pieces


# ---- constructors: nl.arange, nl.mgrid, nl.ds ----

def arange(start, stop=None, step=1) -> IndexExpr:
    if stop is None:
        start, stop = 0, start
    if start.__class__ is not int or stop.__class__ is not int or step.__class__ is not int:
        # (plain ints, the usual arguments, are what _as_int would return them as)
        start, stop, step = (_as_int(v, "nl.arange") for v in (start, stop, step))
    if step == 0:
        raise NKIError("nl.arange step must not be 0", caller_location())
    n = len(range(start, stop, step))
    if n == 0:
        raise NKIError(f"nl.arange({start}, {stop}, {step}) is empty", caller_location())
    return _expr((n,), start, (step,))


class IndexGrid(tuple):
    """The result of ``nl.mgrid[...]``: one expression per dimension, also reachable as
    ``.p`` (the partition dimension) and ``.x``, ``.y``, ``.z``, ``.w`` (the free dimensions)."""

    _NAMES = ("p", "x", "y", "z", "w")

    def __getattr__(self, name):
        if name in self._NAMES and self._NAMES.index(name) < len(self):
            return self[self._NAMES.index(name)]
        raise AttributeError(name)


class _MGrid:
    def __getitem__(self, key) -> IndexGrid:
        if not isinstance(key, tuple):
            key = (key,)
        n = len(key)
        exprs = []
        for d, k in enumerate(key):
            if not isinstance(k, slice) or k.stop is None:
                raise NKIError("nl.mgrid takes slices with bounds, e.g. nl.mgrid[0:128, 0:512]",
                               caller_location())
            exprs.append(arange(0 if k.start is None else k.start, k.stop,
                                1 if k.step is None else k.step))
        # dense, as NumPy's mgrid: every expression spans the whole grid
        shape = tuple(e.shape[0] for e in exprs)
        return IndexGrid([IndexExpr(shape, e.const,
                                    tuple(e.coefs[0] if i == d else 0 for i in range(n)))
                          for d, e in enumerate(exprs)])


mgrid = _MGrid()


def ds(start, size) -> slice:
    """``nl.ds(start, size)``: the slice ``start:start+size``."""
    start, size = _as_int(start, "nl.ds"), _as_int(size, "nl.ds")
    return slice(start, start + size)


# ---- subscripts: tensor[...] -> strided view ----

class BoundCheck:
    """``0 <= const + sum_d coefs[d] * i[d] < size`` must hold over the box an instruction
    finally uses; ``axis`` is the subscripted tensor's dimension (for the message)."""

    __slots__ = ("const", "coefs", "size", "axis")

    def __init__(self, const: int, coefs: tuple, size: int, axis: int):
        self.const = const
        self.coefs = coefs
        self.size = size
        self.axis = axis

    def violation(self, box_shape: tuple) -> str | None:
        lo = hi = self.const
        for c, n in zip(self.coefs, box_shape):
            span = c * (n - 1)
            if span < 0:
                lo += span
            else:
                hi += span
        if lo < 0 or hi >= self.size:
            return (f"index range [{lo}, {hi}] of dimension {self.axis} is outside "
                    f"[0, {self.size})")
        return None


#: ``_slice_range(s, size, axis)``: (start, step, count) of a slice, without NumPy's clamping: a
#: slice reaching outside the dimension is an out-of-range access (checked later), not a shorter
#: one. In C (``cpp/python/trace_subscript.cpp``, the home of the subscripts' slice arithmetic).
_slice_range = _core.nki.slice_range


def resolve_subscript(key, shape: tuple, strides: tuple, offset: int, checks: tuple):
    """``view[key]`` for a view ``(offset, shape, strides, checks)``.

    Integers pick one index (the dimension disappears), slices keep a dimension, index
    expressions place the view on their broadcast grid. When index expressions and slices mix,
    each slice acts as an arange over its own grid dimension, counted among the non-integer
    subscripts (``t[i_p, 0:512]`` with ``i_p = nl.arange(128)[:, None]`` is 128 x 512).
    Returns ``(offset, shape, strides, checks)`` of the result.
    """
    if not isinstance(key, tuple):
        key = (key,)
    ndim = len(shape)
    if not checks and len(key) <= ndim:
        view = basic_subscript(key, shape, strides, offset) \
            if not key or key[0].__class__ is not IndexExpr else None
        if view is None and len(key) == ndim:
            view = _expr_subscript(key, shape, strides, offset)
        if view is not None:
            return view
    n_ellipsis = sum(k is Ellipsis for k in key)
    if n_ellipsis > 1:
        raise NKIError("an index can have only one '...'", caller_location())
    if n_ellipsis:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - len(key) + 1) + key[i + 1:]
    if len(key) > ndim:
        raise NKIError(f"{len(key)} indices for a tensor of {ndim} dimension(s)", caller_location())
    key = key + (slice(None),) * (ndim - len(key))

    advanced = False
    for k in key:
        if isinstance(k, IndexExpr):
            advanced = True
        elif k is None:
            raise NKIError("'None' (new axis) is not supported in tensor subscripts",
                           caller_location())
        elif not isinstance(k, (slice, int)):
            if hasattr(k, "storage"):
                raise NKIError("indexing by a tile (a run-time value) is not supported; use "
                               "integers, slices or nl.arange expressions", caller_location())
            _as_int(k, "a subscript")

    if not advanced and not checks:
        view = basic_subscript(key, shape, strides, offset)
        if view is not None:
            return view

    # Every subscript becomes an expression on a common grid.
    exprs = []
    if advanced:
        grid_rank = sum(not isinstance(k, int) for k in key)
        pos = 0
        for axis, k in enumerate(key):
            if isinstance(k, IndexExpr):
                exprs.append(k)
                pos += 1
            elif isinstance(k, slice):
                start, step, count = _slice_range(k, shape[axis], axis)
                exprs.append(IndexExpr(tuple(count if i == pos else 1 for i in range(grid_rank)),
                                       start, tuple(step if i == pos else 0
                                                    for i in range(grid_rank))))
                pos += 1
            else:
                exprs.append(IndexExpr((), operator.index(k), ()))
        grid = ()
        for e in exprs:
            grid = _broadcast_shapes(grid, e.shape)
        exprs = [e.broadcast_to(grid) for e in exprs]
    else:
        grid = tuple(_slice_range(k, shape[a], a)[2] for a, k in enumerate(key)
                     if isinstance(k, slice))
        rank = len(grid)
        pos = 0
        for axis, k in enumerate(key):
            if isinstance(k, slice):
                start, step, _ = _slice_range(k, shape[axis], axis)
                exprs.append(IndexExpr(grid, start, tuple(step if i == pos else 0
                                                          for i in range(rank))))
                pos += 1
            else:
                k = operator.index(k)
                if -shape[axis] <= k < 0:
                    k += shape[axis]
                exprs.append(IndexExpr(grid, k, (0,) * rank))

    rank = len(grid)
    new_offset = offset
    new_strides = [0] * rank
    new_checks = []
    for axis, (e, stride, size) in enumerate(zip(exprs, strides, shape)):
        new_offset += stride * e.const
        for d, c in enumerate(e.coefs):
            new_strides[d] += stride * c
        lo, hi = e.value_range()
        if lo < 0 or hi >= size:
            if not any(e.coefs):
                raise NKIError(f"index {e.const} is out of range for dimension {axis} of size "
                               f"{size}", caller_location())
            new_checks.append(BoundCheck(e.const, e.coefs, size, axis))
    for chk in checks:
        const = chk.const + sum(c * e.const for c, e in zip(chk.coefs, exprs))
        coefs = tuple(sum(c * e.coefs[d] for c, e in zip(chk.coefs, exprs)) for d in range(rank))
        composed = BoundCheck(const, coefs, chk.size, chk.axis)
        if composed.violation(grid) is not None:
            new_checks.append(composed)
    return new_offset, grid, tuple(new_strides), tuple(new_checks)


def partition_free_subscript(a, b, shape: tuple, strides: tuple, offset: int):
    """``t[a, b]`` of a 2-D view ``(offset, shape, strides)`` for a [P, 1] partition expression
    ``a`` and a [1, F] free expression ``b`` (``t[t * 128 + ip, ic]``), the commonest advanced
    subscript, or an integer ``b`` (``t[ip, 0]``), when both stay in range: ``(offset, shape,
    strides)`` of the result; None for anything else (the general path's job)."""
    if a.__class__ is not IndexExpr:
        return None
    if b.__class__ is int:  # t[ip, j]: column j as a [P, 1] tile
        a_shape = a.shape
        if len(a_shape) != 2 or a_shape[1] != 1 or not 0 <= b < shape[1]:
            return None
        p = a_shape[0]
        ca = a.coefs[0] if p != 1 else 0
        a0, n0 = a.const, shape[0]
        if 0 <= a0 < n0 and 0 <= a0 + ca * (p - 1) < n0:  # (as below)
            s0, s1 = strides
            return offset + s0 * a0 + s1 * b, a_shape, (s0 * ca, 0)
        return None
    if b.__class__ is not IndexExpr:
        return None
    a_shape, b_shape = a.shape, b.shape
    if len(a_shape) != 2 or len(b_shape) != 2:
        return None
    # a varies along the grid's first dimension only, b along its second (a [P, 1] and a
    # [1, F] expression, or the two of a dense nl.mgrid[0:P, 0:F])
    if a_shape[1] != 1 and (a.coefs[1] or a_shape[1] != b_shape[1]) or \
            b_shape[0] != 1 and (b.coefs[0] or b_shape[0] != a_shape[0]):
        return None
    p, f = a_shape[0], b_shape[1]
    ca = a.coefs[0] if p != 1 else 0  # size-1 dimensions hold index 0
    cb = b.coefs[1] if f != 1 else 0
    a0, b0 = a.const, b.const
    n0, n1 = shape
    # In range when both ends of each expression's range are (the first and last index).
    if 0 <= a0 < n0 and 0 <= a0 + ca * (p - 1) < n0 and \
            0 <= b0 < n1 and 0 <= b0 + cb * (f - 1) < n1:
        s0, s1 = strides
        return offset + s0 * a0 + s1 * b0, (p, f), (s0 * ca, s1 * cb)
    return None


def _expr_subscript(key: tuple, shape: tuple, strides: tuple, offset: int):
    """The general path of :func:`resolve_subscript` for its common advanced case, one index
    expression or integer per dimension with the expressions on grids of one rank
    (``t[t * 128 + ip, ic]``), computed without building the broadcast expressions. None when
    the subscript is anything else (or wrong: the general path then reports it)."""
    if len(key) == 2:
        view = partition_free_subscript(key[0], key[1], shape, strides, offset)
        if view is not None:
            return view + ((),)
    grid = None
    for k in key:
        if k.__class__ is IndexExpr:
            if grid is None:
                grid = k.shape
            elif k.shape != grid:
                if len(k.shape) != len(grid):
                    return None
                dims = []
                for x, y in zip(grid, k.shape):
                    if x != y and x != 1 and y != 1:
                        return None
                    dims.append(x if y == 1 else y)
                grid = tuple(dims)
        elif k.__class__ is not int:
            return None
    if grid is None:
        return None
    new_strides = [0] * len(grid)
    new_checks = []
    for axis, k in enumerate(key):
        stride, size = strides[axis], shape[axis]
        if k.__class__ is int:
            if not 0 <= k < size:
                raise NKIError(f"index {k} is out of range for dimension {axis} of size {size}",
                               caller_location())
            offset += stride * k
            continue
        const = k.const
        offset += stride * const
        lo = hi = const
        coefs = k.coefs
        if 1 in k.shape:  # a dimension of size 1 (stretched over the grid) holds index 0
            coefs = tuple([0 if s == 1 else c for s, c in zip(k.shape, coefs)])
        for d, c in enumerate(coefs):
            if c:
                new_strides[d] += stride * c
                span = c * (grid[d] - 1)
                if span < 0:
                    lo += span
                else:
                    hi += span
        if lo < 0 or hi >= size:
            if not any(coefs):
                raise NKIError(f"index {const} is out of range for dimension {axis} of size "
                               f"{size}", caller_location())
            new_checks.append(BoundCheck(const, coefs, size, axis))
    return offset, grid, tuple(new_strides), tuple(new_checks)


#: ``basic_subscript(key, shape, strides, offset)``: the common case of :func:`resolve_subscript`
#: (a view without index checks, at most one subscript per dimension): integers, NumPy integers
#: and slices inside their dimensions (omitted trailing dimensions are whole), ``(offset, shape,
#: strides, ())``; None for a key with anything else or a slice reaching outside its dimension
#: (the general path's bound checks); an integer out of range and a bad slice raise NKIError, in
#: key order. In C on ``bir::View`` (``cpp/python/trace_subscript.cpp``), as ``Tensor``'s subscript.
basic_subscript = _core.nki.basic_subscript
