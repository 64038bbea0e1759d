"""Top-k kernels: three methods behind ``topk_method_mapping.SUPPORTED_TOPK_METHOD_MAPPING``
(``neuronxcc.nki._private_kernels.topk``, seed 003's second registry).

Each method is a working NKI kernel ``(inp, k, sorted_flag=True) -> (values, indices)`` over the
last dim of ``inp`` (``[rows, vocab]`` or ``[B, S, vocab]``); they differ in how they spread the
work over partitions:

* ``naive_scanning_topk`` -- a row per partition, scanned ``ceil(k/8)`` times;
* ``cascaded_2_stage_topk`` -- rows cut into chunks across partitions, per-chunk top-k, then a
  second stage over each row's chunk winners;
* ``rotational_topk`` -- rows cut into chunks across partitions; stage by stage each chunk's
  top-k rotates to the next chunk's partitions until every chunk has seen all the others'.
"""
