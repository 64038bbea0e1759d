"""The production NKI leaves of the internal kernel registry (``neuronxcc.private_nkl``).

``BirCodeGenLoop``'s IT56 sink re-traces these through the NKI front end (``neuronxsim.nki``)
for each ``InternalNativeNkiKernel`` macro that names them (seed 003):

* ``resize.resize_nearest_fixed_dma_kernel`` -- nearest-neighbour resize of NHWC images;
* ``select_and_scatter.select_and_scatter_kernel`` -- max-pool backward (3x3, stride 2, pad 1);
* ``conv`` -- six convolutions, each named by the layouts it reads;
* ``transpose.tiled_pf_transpose`` / ``tiled_dve_transpose_10`` -- 2-D transposes over two
  logical NeuronCores.

The experimental ``pbp`` convolutions and ``blockwise_mm`` live in ``neuronxsim.nki._private_kernels``.
Nothing here is imported until the registry is first built.
"""
