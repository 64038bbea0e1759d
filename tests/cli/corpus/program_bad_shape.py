from neuronxsim.starfish.penguin import ir

def build_program():
    p = ir.Program("p")
    p.tensor("a", [0, 4])
    return p
