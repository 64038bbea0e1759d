"""The IT55 / IT56 resolvers through neuronxsim.walrus."""

import pytest

from neuronxsim import BIRError, KernelError, KLRError, walrus
from neuronxsim.bir import DType, InstructionType, MemoryType

from walrus_kernels import add_kernel, compiled, host


@pytest.mark.parametrize("fmt", ["bir", "klir"])
def test_nki_kernel_node_is_replaced_by_its_compiled_kernel(fmt):
    m, node = host(InstructionType.NKIKernel)
    node.func = compiled(add_kernel(), fmt)
    before = m.to_json()
    resolved = walrus.resolve_nki_kernels(m)
    assert m.to_json() == before  # the input module is untouched
    insts = resolved.function(0).blocks[0].instructions
    assert [i.name for i in insts] == ["k0/load_a", "k0/load_b", "k0/add", "k0/store"]
    assert {i.kernel for i in insts} == {"k0"}
    assert insts[0].ins[0].memref == "x" and insts[3].outs[0].memref == "z"
    assert insts[2].outs[0].memref == "k0/tc"
    assert [i.source for i in insts] == ["add.py:1", "add.py:2", "add.py:3", "add.py:4"]
    resolved.verify()


def test_form_a_and_form_b_are_identical(tmp_path):
    kernel = add_kernel()
    walrus.write_klr(kernel, tmp_path / "add.klr")
    (tmp_path / "add.json").write_text(kernel.to_json())
    results = []
    for fmt, binary in (("klir", str(tmp_path / "add.klr")), ("bir", kernel.to_json(-1)),
                        ("bir", str(tmp_path / "add.json")), ("klir", "add.klr"), ("bir", "add.json")):
        m, node = host(InstructionType.NKIKLIRKernel)
        node.kernel_format = fmt
        node.klir_binary = binary
        results.append(walrus.lower_kernel_inst(m, base_dir=tmp_path).to_json())
    assert all(r == results[0] for r in results)


def test_multi_core_kernel(tmp_path):
    walrus.write_klr(add_kernel(128, 512, cores=2), tmp_path / "add2.klr")
    m, node = host(InstructionType.NKIKLIRKernel)
    node.klir_binary = str(tmp_path / "add2.klr")
    node.grid = 2
    resolved = walrus.resolve_kernel_nodes(m, base_dir=tmp_path)
    assert len(resolved.functions) == 2
    core1 = resolved.function(1).blocks[0].instructions
    assert core1[0].ins[0].memref == "x" and core1[0].ins[0].offset == 64 * 512


def test_errors_name_the_node(tmp_path):
    m, node = host(InstructionType.NKIKernel)
    node.func = compiled(add_kernel(64, 512))
    with pytest.raises(KernelError, match=r"\(NKIKernel 'k0'\): kernel tensor 'a' is float32\[64, 512\] "
                                          r"but ins\[0\] \('x'\) is float32\[128, 512\]"):
        walrus.resolve_kernel_nodes(m)
    walrus.add_compiled_nki_kernel("nki/broken.0.json", b"[1]")
    node.func = "nki/broken.0.json"
    with pytest.raises(BIRError, match=r"\(NKIKernel 'k0'\): compiled kernel 'nki/broken.0.json': "):
        walrus.resolve_kernel_nodes(m)
    node.func = "nki/missing.0.json"
    with pytest.raises(KernelError, match=r"\(NKIKernel 'k0'\): compiled kernel 'nki/missing.0.json' was not compiled in "
                                          r"this process, and its file cannot be read: .*/nki/missing.0.json: cannot "
                                          r"open the file"):
        walrus.resolve_kernel_nodes(m, base_dir=tmp_path)
    m, node = host(InstructionType.NKIKLIRKernel)
    node.klir_binary = "missing.klr"
    with pytest.raises(KLRError, match=r"Form A .*/missing.klr: cannot open the file"):
        walrus.resolve_kernel_nodes(m, base_dir=tmp_path)
    node.klir_binary = "/nonexistent.klr"
    with pytest.raises(KernelError, match=r"Form A .*klir_binary '/nonexistent.klr' is outside the files folder"):
        walrus.resolve_kernel_nodes(m, base_dir=tmp_path)


def test_kinds_are_checked():
    m, _ = host(InstructionType.NKIKernel)
    with pytest.raises(ValueError, match="BIRKernel nodes are not resolved here"):
        walrus.resolve_kernel_nodes(m, kinds=("BIRKernel",))
    # Only IT56 requested: the IT55 node stays.
    assert walrus.resolve_kernel_nodes(m, kinds=[InstructionType.NKIKLIRKernel]).to_json() == m.to_json()


def node_buffer_host(kind, tmp_path, sb=(), psum=()):
    """host() with add_kernel bound as IT55 or IT56 Form B, the node reserving `sb` / `psum`.
    add_kernel's tiles take SBUF bytes [0, 6144) of each partition and one PSUM bank [2048, 4096)."""
    kernel = add_kernel()
    kernel.function(0).createOnChipTensor("acc", MemoryType.PSUM, DType.float32, 128, 2048, 0, 2048)
    m, node = host(kind)
    if kind == InstructionType.NKIKernel:
        node.func = compiled(kernel, name="add_with_psum")
    else:
        node.kernel_format = "bir"
        node.klir_binary = kernel.to_json(-1)
    node.sb_buf_shape = list(sb)
    node.psum_buf_shape = list(psum)
    return m, node


@pytest.mark.parametrize("kind", [InstructionType.NKIKernel, InstructionType.NKIKLIRKernel])
@pytest.mark.parametrize("sb, psum, message", [
    ([128, 4096], [], r"kernel tensor 'tc' needs 2048 bytes per partition of SBUF at byte 4096, beyond the 4096 "
                      r"bytes per partition the node may use"),
    ([], [128, 1, 2048], r"kernel tensor 'acc' needs 2048 bytes per partition of PSUM at byte 2048, beyond the 2048 "
                         r"bytes per partition the node may use"),
    ([128, -16], [], r"sb_buf_shape \[128, -16\]; expected \[128, bytes per partition\]"),
    ([128], [], r"sb_buf_shape \[128\]; expected \[128, bytes per partition\]"),
    ([], [128, 2, 64], r"psum_buf_shape \[128, 2, 64\]; expected \[128, banks, 2048\]"),
])
def test_a_kernel_must_fit_the_on_chip_memory_its_node_reserves(kind, sb, psum, message, tmp_path):
    """IT54's rule (walrus/NodeBuffers.h) holds for IT55 and IT56 too: a kernel tile outside the
    node's sb_buf_shape / psum_buf_shape would overwrite the host's tiles that live across the node."""
    m, node = node_buffer_host(kind, tmp_path, sb, psum)
    with pytest.raises(KernelError, match=rf"\({kind.name} 'k0'\): {message}"):
        walrus.resolve_kernel_nodes(m)


@pytest.mark.parametrize("kind", [InstructionType.NKIKernel, InstructionType.NKIKLIRKernel])
def test_a_kernel_inside_its_node_buffers_is_spliced(kind, tmp_path):
    m, _ = node_buffer_host(kind, tmp_path, [128, 6144], [128, 2, 2048])
    assert len(walrus.resolve_kernel_nodes(m).function(0).blocks[0].instructions) == 4
