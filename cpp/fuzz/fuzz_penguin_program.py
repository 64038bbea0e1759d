"""atheris harness for the Penguin program loader (``Program.loads``, what ``neuronxsim lower``
and ``info`` read). Any bytes must either load into a program whose JSON round trip is stable,
or be refused with ``CodegenError`` whose message is short; anything else (another
exception, a crash, a message echoing megabytes of input) is a bug.

    python3 cpp/fuzz/fuzz_penguin_program.py -dict=cpp/fuzz/penguin_program.dict CORPUS_DIR
"""

import sys

import atheris

with atheris.instrument_imports(include=["neuronxsim.starfish.penguin.ir"]):
    from neuronxsim.errors import CodegenError
    from neuronxsim.starfish.penguin.ir import Program

#: The longest refusal message accepted (the command line cuts its lines at 400 characters).
MAX_MESSAGE = 1000


def test_one_input(data: bytes) -> None:
    try:
        program = Program.loads(data)
    except CodegenError as e:
        message = str(e)
        if len(message) > MAX_MESSAGE:
            raise AssertionError(f"a refusal of {len(message)} characters: {message[:200]!r}...")
        return
    once = program.dumps()
    if Program.loads(once).dumps() != once:
        raise AssertionError("the JSON round trip of a loaded program is not stable")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
