"""``neuronxsim registry``: the internal kernel registry (the IT56 sink's table) and its configs."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("registry", help="list the internal kernel registry and its configs")
    p.set_defaults(func=run)


def _builder_name(builder) -> str:
    return "-" if builder is None else getattr(builder, "__qualname__", repr(builder)).split(".<locals>.")[-1]


def run(args) -> int:
    from neuronxsim.starfish.penguin.ir.kernels import kernel_function
    from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen

    registry = codegen.get_internal_kernel_registry()
    head = ("#", "key", "kernel function", "operands", "args builder", "multicore", "output param")
    rows = [head]
    for i, (key, cfg) in enumerate(registry.items(), 1):
        fn = kernel_function(cfg.kernel_func)
        name = f"{fn.__module__}.{fn.__name__}"
        rows.append((str(i), key, name, "all" if cfg.operand_count is None else str(cfg.operand_count),
                     _builder_name(cfg.additional_args_builder), str(cfg.requires_multicore_grid),
                     str(cfg.output_is_parameter)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))
    return 0
