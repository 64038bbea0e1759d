import neuronxsim.nki as nki
import neuronxsim.nki.language as nl


class Skipped(BaseException):
    """A BaseException of the user's own (as pytest.skip raises)."""


@nki.jit
def skips(a):
    raise Skipped("not on this host")
