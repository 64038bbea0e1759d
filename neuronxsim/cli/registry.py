"""``neuronxsim registry``: the internal kernel registry (the IT56 sink's table) and its configs."""

from __future__ import annotations

from neuronxsim.cli import printing

HEAD = ("#", "key", "kernel function", "operands", "args builder", "multicore", "output param")


def add_parser(sub) -> None:
    p = sub.add_parser("registry", help="list the internal kernel registry and its configs")
    printing.add_options(p)
    p.set_defaults(func=run)


def _builder_name(builder) -> str:
    return "-" if builder is None else getattr(builder, "__qualname__", repr(builder)).split(".<locals>.")[-1]


def run(args) -> int:
    from neuronxsim.starfish.penguin.ir.kernels import kernel_function
    from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen

    entries = []
    for key, cfg in codegen.get_internal_kernel_registry().items():
        fn = kernel_function(cfg.kernel_func)
        entries.append({"key": key, "kernel_function": f"{fn.__module__}.{fn.__name__}",
                        "operand_count": cfg.operand_count, "args_builder": _builder_name(cfg.additional_args_builder),
                        "requires_multicore_grid": cfg.requires_multicore_grid,
                        "output_is_parameter": cfg.output_is_parameter})

    def text():
        rows = [HEAD] + [(str(i), e["key"], e["kernel_function"],
                          "all" if e["operand_count"] is None else str(e["operand_count"]), e["args_builder"],
                          str(e["requires_multicore_grid"]), str(e["output_is_parameter"]))
                         for i, e in enumerate(entries, 1)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
        for k, r in enumerate(rows):
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
            if k == 0:
                print("  ".join("-" * w for w in widths))

    printing.emit(args, {"command": "registry", "kernels": entries}, text)
    return 0
