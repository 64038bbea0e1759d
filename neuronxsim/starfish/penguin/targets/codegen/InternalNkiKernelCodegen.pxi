# The IT56 sink (seed 003, seed 000 section 4), included by BirCodeGenLoop.pyx.
#
# ``codegenInternalNativeNkiKernel`` lowers an ``InternalNativeNkiKernel`` macro: it looks the
# macro's ``func_name`` up in the internal kernel registry (``_resolve_kernel_config``), re-traces
# the registry's NKI leaf with the NKI front end (``neuronxsim.nki``) for the macro's shapes and
# attrs, and emits one ``InstNKIKLIRKernel`` (IT56) carrying the traced kernel in one of two
# forms, chosen by the ``NKI_FRONTEND`` environment variable (default ``beta2``):
#
# * beta2, Form A: ``kernel_format`` "klir"; ``klir_binary`` is the absolute path of a KLR file
#   (``neuronxsim.walrus.write_klr``); ``nki_binary_version_identifier`` is
#   "<KLR metadata format>/<KLR header version>";
# * beta3, Form B: ``kernel_format`` "bir"; ``klir_binary`` is the kernel's BIR JSON text;
#   ``nki_binary_version_identifier`` is "bir-json/<BIR JSON version>.<format revision>".
#
# The module's ``files_dir`` (where its file references resolve, walrus/FileReference.h) becomes
# the KLR directory of its first Form A node, unless it names a folder already.
#
# Where KLR files go: the codegen's ``klr_dir`` if given, else the directory named by
# ``NEURONXSIM_KLR_DIR`` if set (either created if needed,
# never cleaned: use it to keep Form A modules resolvable after the process ends, e.g. a
# directory next to the saved module), else a per-process temporary directory removed when the
# process that made it exits. Files are named by kernel and content hash, and are written to a
# temporary name in that directory and renamed into place, so none is ever seen half-written.
#
# Traces are cached per process, keyed by the leaf, front end, arch, grid, the operand shapes and
# dtypes, and the kernel's keyword arguments; ``KernelMetricsCollector`` counts hits and misses.

import atexit
import hashlib
import importlib
import os
import shutil
import tempfile

#: NKI_FRONTEND value -> the kernel_format of the IT56 node it produces.
NKI_FRONTEND_FORMATS = {'beta2': 'klir', 'beta3': 'bir'}
NKI_FRONTEND_DEFAULT = 'beta2'

#: Logical NeuronCores a ``requires_multicore_grid`` leaf is traced for (grid=(VNC(2),)): the
#: traced module has one function per NeuronCoreId.
MULTICORE_GRID = 2

#: Environment variable naming a persistent directory for Form A KLR files.
KLR_DIR_ENV = 'NEURONXSIM_KLR_DIR'

_TRACE_CACHE = {}  # trace key -> TracedInternalKernel
_process_klr_dir = None  # (pid, path) of this process's temporary KLR directory


class TracedInternalKernel:
    """What an IT56 node carries for one traced registry leaf."""

    __slots__ = ('klir_binary', 'kernel_format', 'nki_binary_version_identifier', 'func_args', 'func_outs',
                 'grid')

    def __init__(self, klir_binary, kernel_format, nki_binary_version_identifier, func_args, func_outs, grid):
        self.klir_binary = klir_binary
        self.kernel_format = kernel_format
        self.nki_binary_version_identifier = nki_binary_version_identifier
        self.func_args = list(func_args)
        self.func_outs = list(func_outs)
        self.grid = grid

    def is_available(self):
        """False once a Form A file has gone (its directory was cleaned): trace again."""
        return self.kernel_format == 'bir' or os.path.isfile(self.klir_binary)


def clear_internal_kernel_trace_cache():
    """Forgets every cached trace (the next lowering of each kernel traces it again)."""
    _TRACE_CACHE.clear()


def nki_frontend():
    """The NKI front end the IT56 sink traces with: ``NKI_FRONTEND``, default beta2."""
    value = os.environ.get('NKI_FRONTEND', NKI_FRONTEND_DEFAULT)
    if value not in NKI_FRONTEND_FORMATS:
        raise CodegenError(f"NKI_FRONTEND is {value!r}; expected one of {', '.join(NKI_FRONTEND_FORMATS)} "
                           f"(unset means {NKI_FRONTEND_DEFAULT})")
    return value


def _klr_directory(klr_dir=None):
    """Where Form A KLR files are written (see the top of this file)."""
    global _process_klr_dir
    configured = klr_dir or os.environ.get(KLR_DIR_ENV)
    if configured:
        try:
            os.makedirs(configured, exist_ok=True)
        except OSError as e:
            what = f"klr_dir {configured!r}" if klr_dir else f"{KLR_DIR_ENV}={configured!r}"
            raise CodegenError(f"{what}: cannot create the KLR directory ({e})") from None
        return os.path.abspath(configured)
    pid = os.getpid()
    if _process_klr_dir is None or _process_klr_dir[0] != pid or not os.path.isdir(_process_klr_dir[1]):
        path = tempfile.mkdtemp(prefix='neuronxsim-klr-')
        _process_klr_dir = (pid, path)
        atexit.register(_remove_process_klr_dir, pid, path)
    return _process_klr_dir[1]


def _remove_process_klr_dir(pid, path):
    if os.getpid() == pid:  # a forked child exiting leaves its parent's files alone
        shutil.rmtree(path, ignore_errors=True)


def _write_klr_file(inst, module, kernel_name, klr_dir=None):
    """(path, nki_binary_version_identifier): ``module`` written as a KLR file in the KLR
    directory, named by kernel and content (atomically: an interrupted write leaves nothing)."""
    walrus = _walrus(inst)
    digest = hashlib.sha256(module.to_json(-1).encode()).hexdigest()[:20]
    path = os.path.join(_klr_directory(klr_dir), f"{kernel_name}-{digest}.klr")
    fd, tmp = tempfile.mkstemp(prefix='.tmp-', suffix='.klr', dir=os.path.dirname(path))
    os.close(fd)
    try:
        walrus.write_klr(module, tmp, kernel_name)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        renamed = _naming(e, tmp, path)
        if renamed is e:
            raise
        raise renamed from None
    header = walrus.klr_info(path)
    return path, f"{header['format']}/{'.'.join(str(v) for v in header['version'])}"


def _naming(e, tmp, path):
    """``e``, naming ``path`` where it named the temporary file ``tmp`` written in its place (a
    full disk's message names the file the user will look for, not one already removed)."""
    if isinstance(e, OSError) and e.filename == tmp and e.strerror:
        return OSError(e.errno, e.strerror, path)
    if isinstance(e, NeuronxsimError) and tmp in str(e):
        return type(e)(str(e).replace(tmp, path))
    return e


def _same_value(a, b):
    """Equal as JSON values (the builders pass shapes as tuples, the macro holds lists)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _refuse_attrs_not_passed(inst, additional_args):
    """Every attr of the macro must reach the kernel as the same keyword argument: one the
    registry entry's argument builder drops (SelectAndScatter's entry has none; ResizeNearest's
    passes only out_shape) or replaces would be ignored silently."""
    attrs = inst.get_attrs_dict()
    kernel = f"internal NKI kernel '{inst.func_name}'"
    dropped = [k for k in attrs if k not in additional_args]
    if dropped:
        passed = ', '.join(f"'{k}'" for k in additional_args)
        raise CodegenError(f"{inst.label}: {kernel} does not take attr{'s' if len(dropped) > 1 else ''} "
                           f"{', '.join(repr(k) for k in dropped)} (its registry entry passes the kernel "
                           f"{'only ' + passed if passed else 'no attrs'})")
    for k, v in attrs.items():
        if not _same_value(additional_args[k], v):
            raise CodegenError(f"{inst.label}: attr '{k}' is {v!r}, but the registry entry of {kernel} passes the "
                               f"kernel {k}={additional_args[k]!r}")


def _trace_key_attrs(additional_args):
    """The kernel's keyword arguments as a hashable, order-independent key (values are JSON
    values, tuples and enums, whose reprs are exact)."""
    return repr(sorted(additional_args.items()))


def _walrus(inst):
    try:  # through sys.modules, so that a build without walrus (or a test's stand-in) is honoured
        walrus = importlib.import_module("neuronxsim.walrus")
    except ImportError:
        raise CodegenError(f"{inst.label}: NKI_FRONTEND=beta2 writes the traced kernel as a KLR file, which needs "
                           "the KLR writer (neuronxsim.walrus.write_klr), not part of this build; set "
                           "NKI_FRONTEND=beta3 to carry the kernel as BIR JSON") from None
    return walrus


def _outputs_as_parameters(inst, leaf, kernel, n_inputs, output_proxies):
    """``kernel``, which takes its outputs as parameters (``output_is_parameter``: its positional
    parameters after the ``n_inputs`` inputs) and writes them, as the kernel the NKI front end
    traces: one that creates those outputs in shared HBM (shapes and dtypes of
    ``output_proxies``, named after the parameters), passes them to ``kernel`` and returns them.
    Inside a trace a kernel's inputs are read-only; tensors it creates are its own."""
    from neuronxsim.nki import language as nl

    func = kernel_function(kernel)
    params = list(inspect.signature(func).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    out_params = params[n_inputs:n_inputs + len(output_proxies)]
    if len(out_params) != len(output_proxies) or any(p.kind not in positional for p in params[:n_inputs] + out_params):
        raise CodegenError(f"{inst.label}: internal NKI kernel {leaf} takes its outputs as parameters "
                           f"(output_is_parameter); expected {n_inputs} input and {len(output_proxies)} output "
                           f"positional parameters, got {inspect.signature(func)}")

    def kernel_with_outputs(*args, **kwargs):
        outputs = [nl.ndarray(proxy.shape, dtype=proxy.dtype, buffer=nl.shared_hbm, name=param.name)
                   for proxy, param in zip(output_proxies, out_params)]
        kernel(*args[:n_inputs], *outputs, *args[n_inputs:], **kwargs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    kernel_with_outputs.__signature__ = inspect.Signature(params[:n_inputs] + params[n_inputs + len(out_params):])
    kernel_with_outputs.__name__ = func.__name__
    kernel_with_outputs.__qualname__ = func.__qualname__
    kernel_with_outputs.__module__ = func.__module__
    return kernel_with_outputs


class InternalNativeNkiKernelCodegen:
    """BirCodeGenLoop's IT56 sink: the registry resolution, the two tracers, the cache and the
    node. Mixed into ``BirCodeGenLoop``, whose ``addInstruction``, ``_checkLowerable``,
    ``_location``, ``_traces``, ``module`` and buffer shapes it uses."""

    def _resolve_kernel_config(self, inst):
        """Look up kernel config from registry and prepare common arguments.
        Returns (kernel_config, internal_kernel, additional_args, call_args).

        ``call_args`` are ndarray proxies (the operands' shapes and dtypes, no data) of the first
        ``operand_count`` srcs (all when None), then of the dsts if ``output_is_parameter``.
        """
        func_name = inst.func_name
        registry = get_internal_kernel_registry()
        kernel_config = registry.get(func_name)
        if kernel_config is None:
            raise CodegenError("Internal NKI kernel '" + str(func_name) + "' is not registered. Available kernels: "
                               + str(registry.keys()))
        internal_kernel = kernel_config.kernel_func
        operand_count = kernel_config.operand_count
        srcs = inst.srcs
        if operand_count is not None:
            if len(srcs) < operand_count:
                raise CodegenError(f"{inst.label} srcs: {len(srcs)} operands; internal NKI kernel '{func_name}' "
                                   f"takes its first {operand_count}")
            srcs = srcs[:operand_count]
        if not inst.dsts:
            raise CodegenError(f"{inst.label} dsts: no operands; expected the results of internal NKI kernel "
                               f"'{func_name}'")
        call_args = _operand_proxies(srcs)
        if kernel_config.output_is_parameter:
            call_args += _operand_proxies(inst.dsts)
        builder = kernel_config.additional_args_builder
        additional_args = builder(inst) if builder is not None else {}
        _refuse_attrs_not_passed(inst, additional_args)
        return kernel_config, internal_kernel, additional_args, call_args

    def _traceWithNkiFrontend(self, inst, resolved):
        """(TracedKernel, grid): the registry leaf of ``inst``, resolved by
        ``_resolve_kernel_config`` into ``resolved``, traced by ``neuronxsim.nki`` for the
        module's arch, its results checked against the macro's dsts."""
        kernel_config, internal_kernel, additional_args, call_args = resolved
        from neuronxsim.nki import jit, trace_kernel
        from neuronxsim.nki.language import nc

        func_name = inst.func_name
        leaf = f"'{func_name}' ({getattr(internal_kernel, '__module__', '?')}." \
               f"{getattr(internal_kernel, '__qualname__', internal_kernel)})"
        if 'arch' in additional_args:
            raise CodegenError(f"{inst.label}: attr 'arch' of internal NKI kernel {leaf} would shadow the trace's "
                               "target arch; expected another attr name")
        kernel, args = internal_kernel, call_args
        if kernel_config.output_is_parameter:
            n_inputs = len(call_args) - len(inst.dsts)
            kernel = _outputs_as_parameters(inst, leaf, internal_kernel, n_inputs, call_args[n_inputs:])
            args = call_args[:n_inputs]
        try:  # here, not in the tracer, which would locate the call at the codegen's caller
            inspect.signature(kernel_function(kernel)).bind(*args, **additional_args)
        except TypeError as e:
            raise CodegenError(f"{inst.label}: internal NKI kernel {leaf} does not take the macro's operands and "
                               f"attrs: {e}") from None
        grid = MULTICORE_GRID if kernel_config.requires_multicore_grid else 1
        launch = jit(kernel)[nc(grid)] if grid > 1 else kernel
        try:
            traced = trace_kernel(launch, *args, arch=TRACE_ARCHS[self.module.arch], **additional_args)
        except NeuronxsimError as e:
            raise CodegenError(f"{inst.label}: tracing internal NKI kernel {leaf} failed: {e}") from None
        if len(traced.outputs) != len(inst.dsts):
            raise CodegenError(f"{inst.label} dsts: {len(inst.dsts)} operands; internal NKI kernel {leaf} returns "
                               f"{len(traced.outputs)} ({', '.join(traced.output_names)})")
        for i, (access, out) in enumerate(zip(inst.dsts, traced.outputs)):
            if tuple(out.shape) != tuple(access.access_shape) or out.dtype != ir.numpy_dtype(access.dtype):
                raise CodegenError(f"{inst.label} dsts[{i}]: {list(access.access_shape)} {access.dtype} does not "
                                   f"match output '{out.name}' {list(out.shape)} {out.dtype} of internal NKI kernel "
                                   f"{leaf}")
        return traced, grid

    def _trace_kernel_beta2(self, inst):
        """NKI_FRONTEND=beta2 (the default): traces the leaf and writes it as a KLR file (Form A)."""
        traced, grid = self._traceWithNkiFrontend(inst, self._resolve_kernel_config(inst))
        path, version = _write_klr_file(inst, traced.module, inst.func_name, self.klr_dir)
        return TracedInternalKernel(path, NKI_FRONTEND_FORMATS['beta2'], version, traced.input_names,
                                    traced.output_names, grid)

    def _trace_kernel_beta3(self, inst):
        """NKI_FRONTEND=beta3: traces the leaf to BIR JSON, carried in the node (Form B)."""
        traced, grid = self._traceWithNkiFrontend(inst, self._resolve_kernel_config(inst))
        version = f"bir-json/{bir.BIR_VERSION}.{bir.FORMAT_VERSION}"
        return TracedInternalKernel(traced.module.to_json(-1), NKI_FRONTEND_FORMATS['beta3'], version,
                                    traced.input_names, traced.output_names, grid)

    def _trace_internal_kernel_to_new_nki_frontend(self, inst, frontend=None):
        """Traces ``inst``'s registry leaf with the front end ``NKI_FRONTEND`` selects (or
        ``frontend``): beta2 -> ``_trace_kernel_beta2``, beta3 -> ``_trace_kernel_beta3``."""
        frontend = nki_frontend() if frontend is None else frontend
        if frontend == 'beta3':
            return self._trace_kernel_beta3(inst)
        return self._trace_kernel_beta2(inst)

    def _traceInternalKernelCached(self, inst):
        """The carrier of ``inst``'s kernel from the trace cache, tracing it on a miss.

        The key is what decides the trace, read off the macro (its registry entry, front end,
        arch, operand shapes and dtypes, attrs), so that ``_resolve_kernel_config`` runs only
        in the tracer, once per miss, as in the shipped module."""
        frontend = nki_frontend()
        func_name = inst.func_name
        operands = lambda accesses: tuple((tuple(a.access_shape), a.dtype) for a in accesses)  # noqa: E731
        key = (func_name, id(get_internal_kernel_registry().get(func_name)), frontend, self.module.arch,
               operands(inst.srcs), operands(inst.dsts), _trace_key_attrs(inst.get_attrs_dict()))
        collector = KernelMetricsCollector.get_instance()
        carrier = _TRACE_CACHE.get(key)
        if carrier is not None and carrier.is_available():
            collector.record_trace_cache(func_name, hit=True)
            return carrier
        collector.record_trace_cache(func_name, hit=False)
        carrier = self._trace_internal_kernel_to_new_nki_frontend(inst, frontend)
        _TRACE_CACHE[key] = carrier
        return carrier

    def codegenInternalNativeNkiKernel(self, inst):
        """Codegen for internal NKI kernels using new NKI frontend path.

        Traces the kernel to new NKI frontend at codegen time and creates BIR NKIKLIRKernel
        instruction. Uses caching to avoid redundant tracing of identical kernels.

        The node's operands are the macro's DRAM tensors, each through ``addOpaqueAP`` (the
        kernel owns its tiling): the srcs bound to the kernel's parameters, then the dsts;
        func_args / func_outs name the traced kernel's Input / Output tensors in that order.
        """
        self._checkLowerable(inst, 'codegenInternalNativeNkiKernel')
        carrier = self._traces.pop(id(inst), None) or self._traceInternalKernelCached(inst)
        operands = [(self._location(a), False) for a in inst.srcs[:len(carrier.func_args)]]
        operands += [(self._location(a), True) for a in inst.dsts]
        func_name = inst.func_name
        KernelMetricsCollector.get_instance().record_kernel(func_name, category=KernelCategory.NKI_KLIR_KERNEL)
        node = self.addInstruction(Opcode.NKIKLIRKernel, inst.name or func_name)
        node.set_klir_binary(carrier.klir_binary)
        node.set_kernel_format(carrier.kernel_format)
        node.set_nki_binary_version_identifier(carrier.nki_binary_version_identifier)
        node.set_func_name(func_name)
        node.set_func_args(carrier.func_args)
        node.set_func_outs(carrier.func_outs)
        node.set_sb_buf_shape(self.sb_buf_shape)
        node.set_psum_buf_shape(self.psum_buf_shape)
        node.set_grid(carrier.grid)
        if carrier.kernel_format != 'bir' and not self.module.files_dir:
            # The KLR file's folder is where this module's file references resolve.
            self.module.files_dir = os.path.dirname(carrier.klir_binary)
        for location, is_output in operands:
            node.addOpaqueAP(location, is_output)
        return node
