"""atheris harness for the ``.npz`` input reader (``neuronxsim.cli.npz``, what ``neuronxsim simulate
--inputs`` reads). Any bytes must either give exactly the arrays asked for (right shapes and
dtypes) or be refused with ``InputError``; anything else (another exception, a crash, reading
past the declared sizes) is a bug.

    python3 cpp/fuzz/fuzz_npz.py -dict=cpp/fuzz/npz.dict CORPUS_DIR
"""

import sys

import atheris

with atheris.instrument_imports(include=["neuronxsim.cli.npz", "neuronxsim.cli.inputs", "zipfile"]):
    import numpy as np

    from neuronxsim.cli.inputs import InputError
    from neuronxsim.cli.npz import read_npz_bytes

#: The module inputs the archives are read for: the seed corpus holds archives of these.
WANTED = {"a": ((4, 3), np.dtype(np.float32)), "b": ((2,), np.dtype(np.int32)), "c": ((2, 2), np.dtype(np.bool_))}


def test_one_input(data: bytes) -> None:
    try:
        arrays = read_npz_bytes(data, WANTED, "fuzz.npz")
    except InputError:
        return
    for name, array in arrays.items():
        shape, dtype = WANTED[name]
        if array.shape != shape or array.dtype != dtype:
            raise AssertionError(f"{name}: read as {array.shape} {array.dtype}")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
