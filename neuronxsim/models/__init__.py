"""Models written as Penguin macro programs, with their inputs and NumPy references."""
