def f():
    """Doc."""
    pass
# end
