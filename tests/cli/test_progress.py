"""The progress bar: drawn in place on a terminal, silent elsewhere; step times kept either way."""

import io

from neuronxsim.cli.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_bar_redraws_and_is_erased():
    out = Terminal()
    p = Progress([("one", 1), ("two", 3)], stream=out)
    with p.step("one"):
        pass
    with p.step("two"):
        pass
    p.close()
    text = out.getvalue()
    assert "\r[" in text and " 25%  two" in text and "100%  two" in text and text.endswith("\r\033[K")
    assert set(p.seconds) == {"one", "two"}


def test_elsewhere_nothing_is_printed():
    out = io.StringIO()
    p = Progress([("one", 1)], stream=out)
    with p.step("one"):
        pass
    p.close()
    assert out.getvalue() == "" and "one" in p.seconds


def test_inside_a_step_the_bar_moves_by_the_reported_fraction_with_an_eta(monkeypatch):
    from neuronxsim.cli import progress as module

    clock = [100.0]
    monkeypatch.setattr(module.time, "perf_counter", lambda: clock[0])
    out = Terminal()
    p = Progress([("lower", 1), ("simulate", 3)], stream=out)
    with p.step("lower"):
        pass
    with p.step("simulate") as step:
        clock[0] += 10.0
        step.fraction(1_000, 4_000)  # a quarter done in 10 s: 30 s to go
        line = p._line()
    p.close()
    assert " 44%  simulate" in line  # (1 + 3 * 0.25) / 4
    assert "1,000/4,000 instructions  ETA 30 s" in line


def test_a_counting_step_shows_its_count():
    p = Progress([("lower", 1)], stream=Terminal())
    with p.step("lower", count=lambda: 12_345, unit="instructions traced"):
        line = p._line()
    p.close()
    assert "12,345 instructions traced" in line and "ETA" not in line


def test_a_memory_error_names_the_step():
    import pytest

    p = Progress([("resolve", 1)], stream=io.StringIO())
    with pytest.raises(MemoryError) as e:
        with p.step("resolve"):
            raise MemoryError()
    assert e.value.__notes__ == ["while: resolve"]


def test_while_a_kernel_is_traced_the_count_is_its_recorded_instructions():
    # The bar polls this from its ticker thread; here the kernel itself asks, after three DMAs.
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl
    from neuronxsim.cli.progress import traced_instructions

    seen = []

    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        seen.append(traced_instructions())
        t = nl.load(a)
        u = nl.load(a)
        nl.store(out, value=t)
        seen.append(traced_instructions())
        nl.store(out, value=u)
        return out

    assert traced_instructions() is None
    nki.trace_kernel(kernel, nki.typing.tensor[[128, 64], nl.float32])
    assert seen == [0, 3]
    assert traced_instructions() is None
