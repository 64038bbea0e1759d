"""Mapping of topk method name to implementation for autodispatching topk kernel"""

from enum import Enum

from neuronxsim.nki._private_kernels.topk.cascaded_2_stage_topk import cascaded_2_stage_topk
from neuronxsim.nki._private_kernels.topk.naive_scanning_topk import naive_scanning_topk
from neuronxsim.nki._private_kernels.topk.rotational_topk import rotational_topk


class SupportedTopkMethods(Enum):
    SCANNING = 0
    CASCADED = 1
    ROTATIONAL = 2


SUPPORTED_TOPK_METHOD_MAPPING = {
    SupportedTopkMethods.SCANNING: naive_scanning_topk,
    SupportedTopkMethods.CASCADED: cascaded_2_stage_topk,
    SupportedTopkMethods.ROTATIONAL: rotational_topk,
}

__all__ = ["SupportedTopkMethods", "SUPPORTED_TOPK_METHOD_MAPPING"]
