program = 3
