"""kernel_imports: a block inside a block for the same folder and flag sets nothing up again
(a local worker holds one open across its jobs); any other block does, and every block leaves
sys.path and sys.meta_path as it found them."""

import os
import sys

from neuronxsim.sweep import kernel_file

from sweep_testing import FAULTS, MATMUL


def test_a_block_inside_the_same_block_sets_nothing_up_and_others_do():
    path = MATMUL.rpartition(":")[0]
    meta, syspath = list(sys.meta_path), list(sys.path)
    with kernel_file.kernel_imports(path, False):
        outer = list(sys.meta_path)
        assert len(outer) == len(meta) + 1 and sys.path[0] == os.path.dirname(path)
        with kernel_file.kernel_imports(FAULTS, False):  # the same folder
            assert sys.meta_path == outer
        with kernel_file.kernel_imports(path, True):  # another flag: set up again
            assert len(sys.meta_path) == len(outer) + 1
        with kernel_file.kernel_imports("/no/such/folder/k.py", False):  # another folder
            assert len(sys.meta_path) == len(outer) + 1
        assert sys.meta_path == outer
        import nki.language  # noqa: F401  (mapped to neuronxsim inside the block)
    assert sys.meta_path == meta and sys.path == syspath
