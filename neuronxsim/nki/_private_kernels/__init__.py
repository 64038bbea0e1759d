"""The library kernels' Python side (``neuronxcc.nki._private_kernels``).

The model-fusion leaves (MLP, QKV, RMSNormQuant, attention) are IT54 library kernels: their
compute is generated natively by walrus (``InlineBIRKernel``) from the node's name, attrs and
shapes, so what the codegen needs from these modules is only their routing constants
(``mlp.TKG_BS_SEQLEN_THRESHOLD``).
"""
