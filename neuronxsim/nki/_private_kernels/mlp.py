"""The MLP library kernel's routing constant, read by ``BirCodeGenLoop.codegenMLPKernel`` and
``codegenNormQKV`` (seed 000: the threshold lives in the leaf module, not in the codegen).

The codegen routes the MLP and QKV leaves to their token-generation (TKG) form iff the number of
tokens they see, ``B * S`` of ``hidden [B, S, H]``, is below ``TKG_BS_SEQLEN_THRESHOLD``
(seed 000's pseudo-code: ``is_tkg = (... < TKG_BS_SEQLEN_THRESHOLD)``), otherwise to their
context-encoding (CTE) form. The codegen imports the constant from here each time it lowers a
macro, so this module's current value decides.

Value: nki-library's ``core/mlp/mlp_parameters.py`` (the open successor of the bundled
``_private_kernels``) has 96. Its own rule is ``B*S <= 96``; the codegen's is the seed's ``<``, so
exactly 96 tokens is CTE here (docs/seed-conformance.md). NxDI's llama MLP uses 128 for a different
decision (whether the model calls the NKI TKG kernel at all instead of the BIR MLP kernel), so it
does not apply here.
"""

TKG_BS_SEQLEN_THRESHOLD = 96

__all__ = ["TKG_BS_SEQLEN_THRESHOLD"]
