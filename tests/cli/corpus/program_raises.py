def build_program():
    raise ValueError("the user says no")
