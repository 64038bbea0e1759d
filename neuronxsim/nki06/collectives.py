"""``nki.collectives``: communication between ranks (devices). neuronxsim simulates one logical
NeuronCore, so every collective is refused, saying so; the names and signatures are NKI 0.6's so
that kernels import and call them as written."""

from __future__ import annotations

from neuronxsim.nki.errors import NKIError, caller_location

from ._api import api
from .tensor import NKIObject


class ReplicaGroup(NKIObject):
    """A group of ranks that take part in a collective operation."""


def _refuse(what: str):
    raise NKIError(f"nki.collectives.{what}: collective communication between ranks is not "
                   "modelled (neuronxsim simulates one logical NeuronCore)", caller_location())


@api
def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    _refuse("all_reduce")


@api
def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    _refuse("all_gather")


@api
def all_gather_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    _refuse("all_gather_v")


@api
def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    _refuse("reduce_scatter")


@api
def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    _refuse("all_to_all")


@api
def all_to_all_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    _refuse("all_to_all_v")


@api
def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    _refuse("collective_permute")


@api
def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group, channel_ids=(0,),
                                priority=None, name=None):
    _refuse("collective_permute_implicit")


@api
def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                       replica_group, op, channel_ids=(0,), priority=None,
                                       name=None):
    _refuse("collective_permute_implicit_reduce")


@api
def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group,
                                                           channel_id=0, name=None):
    _refuse("collective_permute_implicit_current_processing_rank_id")


@api
def rank_id(name=None):
    _refuse("rank_id")


__all__ = ["ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter",
           "all_to_all", "all_to_all_v", "collective_permute", "collective_permute_implicit",
           "collective_permute_implicit_reduce",
           "collective_permute_implicit_current_processing_rank_id", "rank_id"]
