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
