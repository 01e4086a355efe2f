"""The parts of owed's git door; import from `owed.git`, which is the public face (see its docstring)."""
