def build_program(:
    pass
