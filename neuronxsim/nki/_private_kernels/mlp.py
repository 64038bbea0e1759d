"""The MLP library kernel's routing constant, read by ``BirCodeGenLoop.codegenMLPKernel`` and
``codegenNormQKV`` (seed 000: the threshold lives in the leaf module, not in the codegen).

The MLP leaf runs its token-generation (TKG) form iff the number of tokens it sees,
``B * S`` of ``hidden [B, S, H]``, is at most ``TKG_BS_SEQLEN_THRESHOLD``; otherwise its
context-encoding (CTE) form.

Value and rule: nki-library's ``core/mlp/mlp_parameters.py`` (the open successor of the bundled
``_private_kernels``): TKG iff ``B*S <= 96``. That is the library kernel's own decision, which is
what this constant parameterises. NxDI's llama MLP uses 128 for a different decision (whether the
model calls the NKI TKG kernel at all instead of the BIR MLP kernel), so it does not apply here.
"""

TKG_BS_SEQLEN_THRESHOLD = 96

__all__ = ["TKG_BS_SEQLEN_THRESHOLD"]
