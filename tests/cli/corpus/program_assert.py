def build_program():
    assert 1 == 2, "sizes disagree"
